"""jieba's calls on a Segmenter, with jieba's signatures (README "For jieba users"):
cut / lcut / cut_for_search / lcut_for_search / tokenize, and the user dictionary's add_word,
del_word, suggest_freq, get_FREQ and load_userdict.

A mixin of api.Segmenter: these calls only reshape its own (tokenize_batch, the granularity
levels' tokens, its user dictionary), so they live apart from the loading, scoring and batching
that api.py holds. What each needs from the class: `segment_batch`, `tokenize_batch`, `_level_tokens`,
`granularity`, `word_table`, `user_dictionary` (tests/test_structure.py checks that a Segmenter
has each name the mixin reads, and that this list names them).
"""
from __future__ import annotations

from typing import Iterator

from .arguments import check_flag, check_text
from .model.profile import GRANULARITY_NAMES, granularity_value
from .words.assembly import Token
from .words.search_modes import full_mode_tokens, search_tokens


class JiebaCalls:
    # -- jieba's calls, same signatures (README "For jieba users") -----------------------------
    # HMM (and cut's use_paddle): accepted everywhere jieba has it, and ignored: there is no HMM
    # here, the heads decide every junction, for words no dictionary knows too. granularity: this library's own knob,
    # keyword-only so that jieba's positional arguments keep their meaning.
    def cut(self, sentence: str, cut_all=False, HMM=True, use_paddle=False, *, granularity=None) -> Iterator[str]:
        """Words of `sentence` (they tile it); cut_all=True: jieba's full mode, every candidate
        word of the granularity levels, overlapping (see full_tokens). use_paddle, like HMM, is
        accepted and ignored (jieba without paddle installed ignores it too)."""
        check_flag(cut_all, "cut_all", "cut(text, granularity='fine')")
        check_flag(HMM, "HMM", "cut(text, granularity='coarse')")
        check_flag(use_paddle, "use_paddle", "cut(text, granularity='coarse')")
        if cut_all:
            return iter([w for w, _, _ in self.full_tokens(sentence, granularity=granularity)])
        return iter(self.segment_batch([check_text(sentence)], granularity, show_progress=False)[0])

    def lcut(self, sentence: str, cut_all=False, HMM=True, use_paddle=False, *, granularity=None) -> list[str]:
        return list(self.cut(sentence, cut_all, HMM, use_paddle, granularity=granularity))

    def cut_for_search(self, sentence: str, HMM=True, *, granularity=None) -> Iterator[str]:
        """jieba's search mode: each word of cut(), preceded by its sub-words of two characters
        or more (shortest first, then left to right): the finer levels' words inside it and its
        2- and 3-character strings the word table knows as words (search_modes.search_tokens)."""
        check_flag(HMM, "HMM", "cut_for_search(text, granularity='coarse')")
        return iter([w for w, _, _ in self.tokenize(sentence, mode="search", granularity=granularity)])

    def lcut_for_search(self, sentence: str, HMM=True, *, granularity=None) -> list[str]:
        return list(self.cut_for_search(sentence, HMM, granularity=granularity))

    def tokenize(self, unicode_sentence: str, mode: str = "default", HMM=True, *,
                 granularity=None) -> list[Token]:
        """(word, start, end) triples like jieba.tokenize (Token: .word, .start, .end).
        mode="default": the words of cut(), whose offsets tile the text; mode="search":
        cut_for_search's words with their offsets."""
        if mode not in ("default", "search"):
            hint = (f" (granularity is a keyword argument: tokenize(text, granularity={mode!r}))"
                    if mode in GRANULARITY_NAMES else "")
            raise ValueError(f"mode must be 'default' or 'search', got {mode!r}{hint}")
        check_flag(HMM, "HMM", "tokenize(text, granularity='coarse')")
        if mode == "default":
            return self.tokenize_batch([check_text(unicode_sentence)], granularity, show_progress=False)[0]
        level = self.granularity if granularity is None else granularity_value(granularity)
        finer = sorted({v for v in GRANULARITY_NAMES.values() if v < level})
        text = check_text(unicode_sentence)
        words, *levels = self._level_tokens(text, [level, *finer])
        return search_tokens(text, words, levels, self.word_table)

    def full_tokens(self, text: str, granularity=None) -> list[Token]:
        """Every candidate word of the levels fine, default, coarse (and `granularity`), once,
        by start then end; a single character is left out where a longer candidate covers it,
        as in jieba's full mode. The candidates overlap and cover every character."""
        levels = set(GRANULARITY_NAMES.values()) | {self.granularity if granularity is None
                                                    else granularity_value(granularity)}
        return full_mode_tokens(self._level_tokens(text, sorted(levels)))

    # -- user dictionary (jieba's calls) ---------------------------------------------------------
    def add_word(self, word: str, freq: int | None = None, tag: str | None = None) -> None:
        """Keep `word` whole wherever it occurs on word edges (any characters, spaces too; see
        dictionary.py for where a word can match and how overlaps are settled). freq (default 1)
        settles overlaps between user words; freq=0 removes the word, as in jieba. tag is kept,
        not used."""
        self.user_dictionary.add(word, freq, tag)

    def del_word(self, word: str) -> None:
        self.user_dictionary.remove(word)

    def suggest_freq(self, segment, tune: bool = False) -> int:
        """segment a str: the frequency that keeps it whole against crossing user words; a tuple
        of pieces: 0 (the joined word is never kept whole, always cut into the pieces).
        tune=True applies it (add_word for a str, a forced split for a tuple)."""
        return self.user_dictionary.suggest(segment, tune=tune)  # tune: computed and applied in one step

    def get_FREQ(self, word: str, default=None):  # noqa: N802 (jieba's name)
        """The user dictionary's frequency of `word`, or `default` (only user words have one here)."""
        freq = self.user_dictionary.frequency(word)
        return default if freq is None else freq

    def load_userdict(self, f) -> int:
        """A jieba dictionary (path, or open file in text or binary mode): `word [freq] [tag]` a
        line. All or nothing: a bad line raises ValueError naming the file and line, and leaves
        the dictionary as it was. Returns the number of entries read (blank lines are skipped)."""
        return self.user_dictionary.load(f)

