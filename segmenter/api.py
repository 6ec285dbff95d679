"""The public API: `Segmenter` turns text into words.

Data flow for a batch of texts (segment_batch = score_texts, then assemble):
  score_texts  ->  a TextPlan per text (junctions.py: its runs, its model sequence, the junctions
                   between two Han characters), scored through overlapping windows by the reader
                   (onnx_engine.py, engine.py or reader.py; model.load_reader): plan.scores, per
                   head and junction
  assemble     ->  words at one granularity (assembly.py; the level's policy in levels.py): the
                   heads' margins over the level's threshold, the word decoder, the conventions,
                   the user dictionary; the (word, start, end) tokens tile the text
"""
from __future__ import annotations

import os
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Iterable, Iterator

from .arguments import (
    check_engine,
    check_positive_int,
    check_text,
    check_texts,
    check_window,
    resolve_device,
)
from .jieba_calls import JiebaCalls
from .model.folders import (
    SHIPPED_MODELS,
    ModelLoadError,
    load_reader,
    read_profile,
    resolve_model_folder,
)
from .model.profile import PROFILE_FILE, HeadProfile, granularity_value
from .run.processes import SegmenterProcesses
from .standards.conventions import DEFAULT_CONVENTIONS, Conventions
from .standards.levels import Level, Standard, standard_named
from .text.plan import TextPlan
from .text.plan import score_texts as _score_texts
from .text.windows import OVERLAP as DEFAULT_OVERLAP
from .text.windows import WINDOW as DEFAULT_WINDOW
from .text.windows import clamp_window
from .words.assembly import Token, assemble
from .words.decoding import WordDecoding
from .words.dictionary import UserDictionary
from .words.search_modes import nest


MAX_LEVELS = 64  # Segmenter.level keeps at most this many levels


def _load_word_table(decode: str, folder: Path, profile: HeadProfile):
    if decode == "threshold":
        return None
    if decode != "words":
        raise ValueError(f"decode must be 'threshold' or 'words', got {decode!r}")
    from .words.table import WordTable
    from .words.table_files import TABLE_FILE, table_path

    path = table_path(folder, profile.runtime)
    if path is None:
        raise ValueError(
            f"decode='words' needs the word table {folder / TABLE_FILE}; build it from raw text with "
            f"`segmenter ngrams --raw YOUR_TEXT.txt --out {folder}`, or use decode='threshold'"
        )
    return WordTable.load(path)


class Segmenter(JiebaCalls):
    """Unsupervised Chinese word segmentation from the attention heads of a character BERT.

    >>> seg = Segmenter()                       # the embedded model
    >>> seg.segment("我爱北京天安门")
    Segmenter.from_pretrained(path_or_hub_name) loads any BERT-style folder with a head
    profile (`segmenter heads --model PATH` writes one).

    engine: "numpy" runs a BERT folder (model.safetensors) with numpy alone (engine.py; no
    torch import); "torch" runs any Hugging Face encoder with transformers, on any device;
    "onnx" runs the folder's model.onnx (`segmenter export-onnx`) with onnxruntime (onnx_engine.py);
    "auto" (default; model.load_reader): on the CPU, onnx when the folder has an export of its
    own weights and onnxruntime is installed (the embedded default does: ~2x numpy; its graph is
    int8, so its words differ from the float engines' on about 1% of sentences), else numpy when
    the folder allows it; torch otherwise.
    window/overlap: None takes the profile's "runtime" entry, else 254/64.
    decode: "threshold" cuts where the combined score passes the granularity's threshold;
    "words" decodes whole words with the folder's n-gram table (decoding.py); None takes the
    profile's "runtime" entry (the embedded models say "words"), else "threshold".
    standard: how words are written (levels.py): "general" (the default: for any text), "pku",
    "msr" or "ud" (the gold standards of those corpora), or a levels.Standard; None: what the
    model's profile names (its "runtime" entry: `segmenter calibrate` writes one), else
    "general". granularity: finer or coarser words within the standard ("fine" 0, "coarse" 1, a
    number in [0, 1]; "default" 0.5 is the standard's own).
    conventions: the character lists behind the standard's rules of numbers, counts, names,
    suffixes and function words, which no head can learn (conventions.py); None: no rules, the
    heads and the word table alone. README "Granularity and standards" has the standards.
    processes: on the CPU with more than one core and the onnx engine, a batch long enough for
    two chunks (about 12 k characters or more: a short last chunk joins the one before) is shared
    with cores - 1 helper processes (spawned on first use, ~1 s in the background while this
    one works; processes.py), the rest of the time by threads (the other engines: threads);
    False: threads only (a server that must not start processes). Threads take a batch in
    chunks from 32 k characters; a smaller one runs in the calling thread, its encoder runs
    shared from 8 k (run/cores.py: below, sharing made calls slower). The words are the same either way.

    Threads: one Segmenter may be shared by threads (a web server's). add_word, del_word,
    suggest_freq(tune=True) and load_userdict are atomic for the threads that segment: each
    call of segment_batch (tokenize_batch, segment, cut, ...) takes the user dictionary as it
    is once, so a text, and a whole batch, is cut with the dictionary before a change or after
    it, never half of it (dictionary.py). The engines' run is safe to call from several threads
    (onnxruntime's InferenceSession.run; numpy's engine keeps no state between calls).
    """

    def __init__(
        self,
        model: str | os.PathLike | None = None,
        *,
        profile: HeadProfile | None = None,
        device: str | None = "cpu",
        batch_size: int = 64,
        num_threads: int | None = None,
        granularity: str | float = "default",
        standard: str | Standard | None = None,
        window: int | None = None,
        overlap: int | None = None,
        engine: str = "auto",
        decode: str | None = None,
        conventions: Conventions | None = DEFAULT_CONVENTIONS,
        processes: bool = True,
    ):
        check_positive_int(batch_size, "batch_size")
        if not isinstance(processes, bool):
            raise TypeError(f"processes must be True (helper processes for large batches) or False, got {processes!r}")
        check_positive_int(num_threads, "num_threads", allow_none=True)
        check_engine(engine)
        if conventions is not None and not isinstance(conventions, Conventions):
            raise TypeError("conventions must be a segmenter.Conventions or None (no rules), "
                            f"got {type(conventions).__name__}")
        self.conventions = conventions
        if profile is not None and not isinstance(profile, HeadProfile):
            raise TypeError(f"profile must be a HeadProfile or None, got {type(profile).__name__}")
        self.granularity = granularity_value(granularity)
        self.device = resolve_device(device)
        self.batch_size = batch_size
        self.folder = resolve_model_folder(model)
        self.profile = profile or read_profile(self.folder)
        if self.profile is None:
            shadowed = (f" (a folder named {model!r} here hides the shipped model of that name: give the shipped "
                        "one's path, segmenter.model.embedded_model_path(name), or run from elsewhere)"
                        if isinstance(model, str) and model in SHIPPED_MODELS else "")
            raise ModelLoadError(
                f"{self.folder} has no head profile ({PROFILE_FILE}); create one with "
                f"`segmenter heads --model {self.folder}` (no gold needed), or pass profile=HeadProfile(...)"
                + shadowed
            )
        self.standard = standard_named(standard if standard is not None else self.profile.runtime.get("standard"))
        # "words": word-level decoding with the folder's n-gram table (decoding.py); "threshold":
        # cut where c > t. None: what the profile's "runtime" entry says, else "threshold".
        decode = decode if decode is not None else self.profile.runtime.get("decode", "threshold")
        self.decode, self.word_table = decode, _load_word_table(decode, self.folder, self.profile)
        self.word_decoding = WordDecoding()  # the decoder's weights (decoding.py), chosen on dev files
        # Window and overlap: the arguments, else the profile's "runtime" entry, else 254/64;
        # checked together before the model loads (a window of 50 is fine with the profile's
        # overlap of 32, not with the 64 of models without one).
        sizes = self.profile.runtime
        window = window if window is not None else sizes.get("window", DEFAULT_WINDOW)
        overlap = overlap if overlap is not None else sizes.get("overlap", DEFAULT_OVERLAP)
        check_window(window, overlap)
        self.engine, self.reader = load_reader(self.folder, self.profile, engine, self.device, num_threads)
        self.model, self.vocab = self.reader.model, self.reader.vocab
        # What is used: at most the model's positions, an overlap of at most half a window.
        self.window, self.overlap = clamp_window(window, overlap, self.reader.max_positions)
        # level()'s levels by (granularity, standard) asked: Level.at costs ~10 us, a short call's 3%
        self._levels: dict = {}
        self.user_dictionary = UserDictionary()
        self.user_dictionary.load_folder(self.folder)  # what save_pretrained wrote, if anything
        self._folder_table = self.word_table  # what helper processes load too (processes.py)
        # Helper processes, started by the first large batch on several cores (processes.py).
        self.processes, self._helpers = processes, SegmenterProcesses()

    @classmethod
    def from_pretrained(cls, name_or_path: str | os.PathLike | None = None, **kwargs) -> "Segmenter":
        return cls(name_or_path, **kwargs)

    def save_pretrained(self, folder: str | os.PathLike) -> Path:
        """Copy the model folder (all its layers) with this segmenter's profile; the word table
        is copied in too where the folder read another folder's (a saved folder stands alone).
        The user dictionary (add_word, load_userdict, suggest_freq) goes with it: its words in
        user_dict.txt, jieba's format (`word freq [tag]`, loadable by load_userdict and jieba),
        its forced splits (suggest_freq(("中", "将"), True)) in user_splits.json, which jieba's
        format cannot say; loading the folder (Segmenter(folder)) loads both. Without user
        words, neither file is written (an old one is removed)."""
        from .words.table_files import standalone_table

        out = Path(folder)
        out.mkdir(parents=True, exist_ok=True)
        profile = self.profile
        if out.resolve() != self.folder.resolve():
            for item in self.folder.iterdir():
                if item.is_file() and item.name != PROFILE_FILE and not item.name.startswith("."):
                    shutil.copy2(item, out / item.name)
            profile = replace(profile, runtime=standalone_table(self.folder, profile.runtime, out))
        profile.save(out)
        self.user_dictionary.save_folder(out)
        from .model.integrity import write_manifest

        write_manifest(out)  # checksums.json, checked on load (integrity.py)
        return out

    def __repr__(self) -> str:
        return (f"Segmenter(model={str(self.folder)!r}, standard={self.standard.name!r}, heads={self.profile.heads}, "
                f"device={self.device!r}, engine={self.engine!r})")

    # -- scoring ----------------------------------------------------------------------------
    def score_texts(self, texts: list[str], batch_size=None, show_progress=None) -> list[TextPlan]:
        """The scores behind the words: a TextPlan per text, with plan.junctions (the model
        positions between two Han characters) and plan.scores, (profile heads, junctions)."""
        texts = check_texts(texts)
        check_positive_int(batch_size, "batch_size", allow_none=True)
        return _score_texts(self.reader, texts, self.window, self.overlap, batch_size or self.batch_size, show_progress)

    # -- word assembly (assembly.py) --------------------------------------------------------------
    def level(self, granularity=None, standard=None) -> Level:
        """The policy of one granularity (levels.py): threshold, decoder options, convention rules;
        of this segmenter's standard, or of `standard` (a name or a levels.Standard)."""
        decoding = self.word_decoding if self.word_table is not None else None
        key = (type(granularity), granularity, standard)  # the type: True is not 1 here (granularity_value refuses it)
        try:  # the level of each (granularity, standard) asked, while the profile and decoder stay
            found = self._levels.get(key)
        except TypeError:  # an unhashable argument: granularity_value and standard_named say what is wrong
            found = key = None
        if (found is not None and found[1] is self.profile and found[2] is decoding and found[3] is self.standard
                and found[4] == self.granularity):
            return found[0]
        g = self.granularity if granularity is None else granularity_value(granularity)
        level = Level.at(g, self.profile, decoding, self.standard if standard is None else standard_named(standard))
        named = standard is None or isinstance(standard, str)  # a Standard object or dict: built each time
        if key is not None and named and type(granularity) in (type(None), str, float, int):
            if len(self._levels) >= MAX_LEVELS:  # many granularities asked: start again
                self._levels.clear()
            self._levels[key] = (level, self.profile, decoding, self.standard, self.granularity)
        return level

    def assemble(self, plans: list[TextPlan], granularity=None, *, dictionary=None, standard=None) -> list[list[Token]]:
        """Words of scored plans (score_texts) at one granularity: (word, start, end) tokens that
        tile each text. The word-assembly step of segment_batch (assembly.py): margins over the
        level's threshold, the word decoder, the conventions, the user dictionary (`dictionary`:
        a snapshot of it, by default taken now). standard: another standard's words from the same
        scores (None: this segmenter's own)."""
        return self._assemble(plans, granularity, dictionary, standard=standard)

    def _assemble(self, plans: list[TextPlan], granularity=None, dictionary=None, words_only: bool = False,
                  standard=None):
        # One snapshot of the user dictionary for the whole call: a batch never sees half a change.
        dictionary = self.user_dictionary.snapshot() if dictionary is None else dictionary
        return assemble(plans, self.profile, self.level(granularity, standard), word_table=self.word_table,
                        conventions=self.conventions, dictionary=dictionary, words_only=words_only)

    def _level_tokens(self, text: str, granularities) -> list[list[Token]]:
        """Tokens of `text` at each granularity, from one reading of the heads. The levels'
        cuts mostly nest (a cut at a coarser level is a cut at every finer one), but nothing
        guarantees it: word decoding decides each level by its own dynamic program, and the
        conventions act on each level's words (on 300 pku_dev sentences of the embedded
        default, 15 had a coarse word crossing a fine cut: 负担|过重 against 负担过重).
        search_modes.nest then leaves a crossing fine token out of the coarse word's parts, and
        every level still tiles the text."""
        plan = self.score_texts([check_text(text)], show_progress=False)[0]
        dictionary = self.user_dictionary.snapshot()  # one for all levels: they see the same words
        return [self.assemble([plan], g, dictionary=dictionary)[0] for g in granularities]

    # -- public API -------------------------------------------------------------------------
    def tokenize_batch(self, texts: Iterable[str], granularity=None, batch_size=None, show_progress=None):
        return self._batch(texts, granularity, batch_size, show_progress)

    def _batch(self, texts, granularity, batch_size, show_progress, words_only: bool = False):
        """tokenize_batch, or (words_only) segment_batch without a Token per word."""
        texts = check_texts(texts)
        check_positive_int(batch_size, "batch_size", allow_none=True)
        level = self.granularity if granularity is None else granularity
        size = batch_size or self.batch_size
        if len(texts) == 1:  # one text (lcut, segment): one chunk whatever the cores, so this thread, at once
            # (texts and batch_size checked above: score_texts' checks are not asked again)
            plans = _score_texts(self.reader, texts, self.window, self.overlap, size, show_progress)
            return self._assemble(plans, level, None, words_only)
        from .run.cores import in_worker_thread, text_chunks, text_slices
        from .run.processes import chunk_chars

        workers = getattr(self.reader, "workers", None)  # onnx_engine.OnnxReader on more than one core
        lengths = [len(t) for t in texts]
        chunks, helpers = [], 0
        if workers and not in_worker_thread():
            # Helper processes for a large batch (processes.py), threads otherwise (cores.py); none
            # for a word table replaced in place: the helpers would read the folder's.
            own_table = self.word_table is self._folder_table
            helpers = self._helpers.helpers_for(workers.count, sum(lengths)) if self.processes and own_table else 0
            chunks = text_chunks(lengths, workers.count, chunk_chars(sum(lengths), workers.count)) if helpers else []
            if len(chunks) < 2:  # too few characters for two chunks of a helper's size: threads
                helpers, chunks = 0, text_chunks(lengths, workers.count)
        in_slices = len(chunks) < 2  # no other core: a large batch in slices, one after another (memory)
        chunks = text_slices(lengths) if in_slices else chunks
        if len(chunks) < 2:  # one core, or a batch too small to share: all in this thread
            plans = _score_texts(self.reader, texts, self.window, self.overlap, size, show_progress)
            return self._assemble(plans, level, None, words_only)
        # The cores share the batch: chunks of texts scored and assembled at once by helper
        # processes or the reader's threads, with one snapshot of the user dictionary; the words
        # are those of one thread, in input order.
        self.level(level)  # a bad granularity fails here, as on one thread, before any work
        dictionary = self.user_dictionary.snapshot()

        def chunk_tokens(chunk: list[int]) -> list[list[Token]] | list[list[str]]:
            plans = _score_texts(self.reader, [texts[i] for i in chunk], self.window, self.overlap, size, False)
            return self._assemble(plans, level, dictionary, words_only)

        if helpers:
            found_in_chunks = self._helpers.map(self, helpers, chunk_tokens, chunks, texts, level, size, words_only)
        elif in_slices:
            found_in_chunks = (chunk_tokens(chunk) for chunk in chunks)
        else:
            found_in_chunks = workers.map(chunk_tokens, chunks)
        tokens: list = [None] * len(texts)
        from .model.reader import progress_enabled

        progress = None
        if progress_enabled(show_progress):
            from tqdm.auto import tqdm

            progress = tqdm(total=sum(lengths), unit="char", desc="segmenting", leave=False)
        try:
            for chunk, found in zip(chunks, found_in_chunks):
                for i, text_tokens in zip(chunk, found):
                    tokens[i] = text_tokens
                if progress is not None:
                    progress.update(sum(lengths[i] for i in chunk))
        finally:
            found_in_chunks.close()
            if progress is not None:
                progress.close()
        return tokens

    def segment_levels(self, text: str, coarse="coarse", fine="fine") -> list[tuple[str, list[str]]]:
        """Coarse words, each with its fine sub-words (like jieba's search mode, from the heads):
        the scores are read once and assembled at both levels. A fine word that crosses a coarse
        word's edge (rare: _level_tokens) is left out of its parts, which then do not join
        back to it (负担|过重 coarse, 负担过重 fine: two coarse words without parts)."""
        coarse, fine = sorted((coarse, fine), key=granularity_value, reverse=True)
        coarse_tokens, fine_tokens = self._level_tokens(text, (coarse, fine))
        nested = nest(coarse_tokens, fine_tokens)
        return [(word, [w for w, _, _ in parts]) for (word, _, _), parts in nested]

    def segment_batch(self, texts: Iterable[str], granularity=None, batch_size=None,
                      show_progress=None) -> list[list[str]]:
        """Words of each text; `"".join(words) == text` for every text."""
        return self._batch(texts, granularity, batch_size, show_progress, words_only=True)

    def segment_lines(self, lines: Iterable[str], *, workers: int | str = "auto", **options) -> Iterator[list[str]]:
        """Words of each line, streamed in input order; workers > 1: that many processes (parallel.py);
        "auto" (default): one per core for an input of parallel.AUTO_CHARS characters or more
        (in a script, under `if __name__ == "__main__":` only), else this process; 1: this process."""
        from .run.parallel import segment_lines

        return segment_lines(lines, segmenter=self, workers=workers, **options)

    def segment_files(self, paths, *, workers: int | str = "auto", errors: str = "strict",
                      **options) -> Iterator[tuple[str, list[str]]]:
        """(path, words) for each line of each UTF-8 file, streamed in order (see segment_lines)."""
        from .run.parallel import segment_files

        return segment_files(paths, segmenter=self, workers=workers, errors=errors, **options)

    def segment(self, text: str, granularity=None) -> list[str]:
        return self.segment_batch([check_text(text)], granularity, show_progress=False)[0]
