"""Whole-word-masking references for Chinese BERT pretraining, from segmenter's words.

    chinese_ref(["我们的国家"], tokenizer)
    # [[2, 5]]: [CLS] 我 们 的 国 家 [SEP], 们 and 家 continue a word

What transformers' examples/research_projects/mlm_wwm/run_chinese_ref.py writes with LTP's
words, and run_mlm_wwm.py reads with --train_ref_file (one JSON list a line): per text, the
positions in the tokenizer's input_ids ([CLS] is 0) of the tokens that continue a word. Its
DataCollatorForWholeWordMask (transformers 4.x) prefixes those tokens with "##", as WordPiece
marks the pieces of a Latin word, and then masks a word's tokens together.

A position is listed when its token is one Chinese character (the CJK ranges BERT's tokenizer
isolates) and the token before it belongs to the same segmenter word: 国家 lists 家, never 国.
Never listed: special tokens, [UNK], Latin words and their "##" pieces (the tokenizer marks
those), digits, punctuation. run_chinese_ref.py only marks words made of Chinese characters
alone; a segmenter word that mixes scripts (a user word GPT模型, 1997年 with ascii conventions)
also has its Chinese characters listed, so the collator masks it whole.

transformers 5 removed DataCollatorForWholeWordMask: DataCollatorForLanguageModeling
(whole_word_mask=True) groups tokens by their offset_mapping instead (touching offsets: one
word), which makes a whole unspaced Chinese sentence one word. whole_word_offsets turns a
reference into the offset_mapping that gives that collator the same words.
"""
from __future__ import annotations

import logging
import os
from bisect import bisect_right
from typing import Iterable, Iterator, Sequence

logger = logging.getLogger(__name__)

MAX_LENGTH = 512  # run_chinese_ref.py's truncation: the longest BERT input
BATCH_TEXTS = 512  # texts segmented and tokenized together (as parallel.CHUNK_LINES) ...
BATCH_CHARS = 65_536  # ... or fewer when they hold this many characters: memory stays flat
# When a text is truncated, only the part its tokens cover is segmented, with this many
# characters after it as right context (a 100,000-character line costs no more than 512 tokens).
CONTEXT_CHARS = 64


def is_chinese_char(char: str) -> bool:
    """A CJK ideograph as BERT's BasicTokenizer (and run_chinese_ref.py) defines it: the
    characters it puts in tokens of their own."""
    cp = ord(char)
    return (
        0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0x20000 <= cp <= 0x2A6DF or 0x2A700 <= cp <= 0x2B73F
        or 0x2B740 <= cp <= 0x2B81F or 0x2B820 <= cp <= 0x2CEAF or 0xF900 <= cp <= 0xFAFF or 0x2F800 <= cp <= 0x2FA1F
    )


def _length(text) -> int:
    return len(text) if isinstance(text, str) else 0  # a non-string is refused once its chunk is read


def _is_chinese_token(token: str) -> bool:
    return len(token) == 1 and is_chinese_char(token)


def chinese_ref(texts: Iterable[str], tokenizer, segmenter=None, batch_size: int = BATCH_TEXTS,
                max_length: int | None = MAX_LENGTH, show_progress: bool | None = None) -> list[list[int]]:
    """For each text, the positions in `tokenizer(text, truncation=True, max_length=max_length)`
    ["input_ids"] of the Chinese characters that continue a word of `segmenter` (a Segmenter,
    whose segment_batch gives the words; default: the embedded model): the "chinese_ref" of
    run_mlm_wwm.py (module docstring).

    tokenizer: a Hugging Face BERT-style tokenizer, or the folder to load one from. A fast one
    aligns its tokens to the words by their offsets; a slow (Python) one by characters.
    max_length: the truncation of the training script (None: none); a longer one only adds
    positions (a truncated text is segmented up to its last token and CONTEXT_CHARS beyond).
    An empty or whitespace text gives [].
    show_progress: a bar over the texts; None follows the log level of "segmenter".
    """
    return list(iter_chinese_ref(texts, tokenizer, segmenter, batch_size, max_length, show_progress))


def iter_chinese_ref(texts: Iterable[str], tokenizer, segmenter=None, batch_size: int = BATCH_TEXTS,
                     max_length: int | None = MAX_LENGTH, show_progress: bool | None = None) -> Iterator[list[int]]:
    """chinese_ref streamed: `batch_size` texts at a time (fewer when they hold BATCH_CHARS
    characters), so memory stays flat over any number of texts (a generator; the arguments are
    checked at once)."""
    if isinstance(texts, str):
        raise TypeError("texts must be a list (or iterable) of strings, not one string")
    if not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
    if max_length is not None and (not isinstance(max_length, int) or max_length < 2):
        raise ValueError(f"max_length must be an integer of at least 2 (room for [CLS] and [SEP]) or None, "
                         f"got {max_length!r}")
    tokenizer = load_tokenizer(tokenizer)
    if segmenter is None:
        from .. import default_segmenter

        segmenter = default_segmenter()
    elif not hasattr(segmenter, "segment_batch"):
        raise TypeError(f"segmenter must be a segmenter.Segmenter (or have its segment_batch), "
                        f"got {type(segmenter).__name__}")
    return _iter_refs(texts, tokenizer, segmenter, batch_size, max_length, show_progress)


def _iter_refs(texts, tokenizer, segmenter, batch_size, max_length, show_progress) -> Iterator[list[int]]:
    from ..model.reader import progress_enabled
    from ..run.lines import chunked

    progress = None
    if progress_enabled(show_progress):
        from tqdm.auto import tqdm

        progress = tqdm(total=len(texts) if hasattr(texts, "__len__") else None, unit="text", unit_scale=True,
                        desc="chinese_ref", smoothing=0.1)
    seen = {"chinese": 0, "tokens": 0}
    try:
        for chunk in chunked(texts, batch_size, BATCH_CHARS, length=_length):
            for text in chunk:
                if not isinstance(text, str):
                    raise TypeError(f"texts must be strings, got {type(text).__name__}")
            yield from _chunk_refs(chunk, tokenizer, segmenter, max_length, seen)
            if progress is not None:
                progress.update(len(chunk))
    finally:
        if progress is not None:
            progress.close()
    if seen["chinese"] and not seen["tokens"]:
        logger.warning("%s gave no token of a single Chinese character for %d Chinese characters: chinese_ref is "
                       "for character-level Chinese BERT tokenizers (bert-base-chinese, chinese-roberta-wwm-ext)",
                       type(tokenizer).__name__, seen["chinese"])


def load_tokenizer(tokenizer):
    """A tokenizer object as it is; a folder (str or path) loaded with AutoTokenizer (a folder
    with only a vocab.txt: as a BERT tokenizer)."""
    if isinstance(tokenizer, (str, os.PathLike)):
        from transformers import AutoTokenizer, BertTokenizerFast

        folder = os.fspath(tokenizer)
        try:
            return AutoTokenizer.from_pretrained(folder)
        except (OSError, ValueError):
            if not os.path.isfile(os.path.join(folder, "vocab.txt")):
                raise
            return BertTokenizerFast.from_pretrained(folder)  # a bare vocab.txt: a BERT WordPiece vocabulary
    if not callable(tokenizer) or not hasattr(tokenizer, "convert_ids_to_tokens"):
        raise TypeError(f"tokenizer must be a Hugging Face tokenizer or its folder, got {type(tokenizer).__name__}")
    return tokenizer


def _chunk_refs(texts: list[str], tokenizer, segmenter, max_length, seen) -> list[list[int]]:
    """The references of one chunk: tokenize, align the tokens to characters, segment the
    part the tokens cover, list the continuing Chinese characters."""
    aligned = _align_fast(texts, tokenizer, max_length) if getattr(tokenizer, "is_fast", False) \
        else [_align_slow(text, tokenizer, max_length) for text in texts]
    # Segment what the tokens cover (a truncated text: that part and some context after it).
    covered = []
    for text, (tokens, spans) in zip(texts, aligned):
        ends = [end for token, (start, end) in zip(tokens, spans) if token is not None]
        limit = len(text) if max_length is None or not ends or ends[-1] >= len(text) else ends[-1] + CONTEXT_CHARS
        covered.append(text[:limit])
    words_of = segmenter.segment_batch(covered, show_progress=False)
    refs = []
    for text, (tokens, spans), words in zip(covered, aligned, words_of):
        starts, position = [], 0
        for word in words:
            starts.append(position)
            position += len(word)
        seen["chinese"] += sum(1 for char in text if is_chinese_char(char))
        ref = []
        for i, token in enumerate(tokens):
            if token is None or not _is_chinese_token(token):
                continue
            seen["tokens"] += 1
            if i == 0 or tokens[i - 1] is None:  # the first token, or one after [CLS]
                continue
            start, (previous_start, previous_end) = spans[i][0], spans[i - 1]
            last = max(previous_start, previous_end - 1)  # the previous token's last character
            if bisect_right(starts, start) == bisect_right(starts, last):  # one word: continued
                ref.append(i)
        refs.append(ref)
    return refs


def _align_fast(texts: list[str], tokenizer, max_length) -> list[tuple[list, list]]:
    """(tokens, spans) of each text: the token strings of input_ids (None for a special token)
    and their (start, end) characters in the text, from the fast tokenizer's offsets."""
    encoded = tokenizer(texts, add_special_tokens=True, truncation=max_length is not None, max_length=max_length,
                        return_offsets_mapping=True, return_special_tokens_mask=True)
    aligned = []
    for ids, offsets, special in zip(encoded["input_ids"], encoded["offset_mapping"], encoded["special_tokens_mask"]):
        strings = tokenizer.convert_ids_to_tokens(ids)
        tokens = [None if is_special else token for token, is_special in zip(strings, special)]
        aligned.append((tokens, [tuple(span) for span in offsets]))
    return aligned


def _align_slow(text: str, tokenizer, max_length) -> tuple[list, list]:
    """_align_fast for a slow tokenizer, which has no offsets: the text in pieces (each Chinese
    character alone, the runs between them whole) tokenized one by one. BERT's tokenizer puts
    every Chinese character in a token of its own, so the pieces' tokens are the text's; they
    are checked against input_ids, and a tokenizer for which they differ is refused."""
    pieces, start = [], 0
    for index, char in enumerate(text):
        if is_chinese_char(char):
            if start < index:
                pieces.append((start, index))
            pieces.append((index, index + 1))
            start = index + 1
    if start < len(text):
        pieces.append((start, len(text)))
    tokens, spans = [], []
    for start, end in pieces:
        run = text[start:end]
        end = start + len(run.rstrip()) if len(run.rstrip()) else end  # a run's tokens end at its last non-space
        for token in tokenizer.tokenize(run):
            tokens.append(token)
            spans.append((start, end))
    encoded = tokenizer(text, add_special_tokens=True, truncation=max_length is not None, max_length=max_length,
                        return_special_tokens_mask=True)
    ordinary = [i for i, is_special in enumerate(encoded["special_tokens_mask"]) if not is_special]
    if tokenizer.convert_tokens_to_ids(tokens[: len(ordinary)]) != [encoded["input_ids"][i] for i in ordinary]:
        raise ValueError(f"cannot align the tokens of {type(tokenizer).__name__} to the characters of {text[:40]!r}: "
                         "pass a fast tokenizer (AutoTokenizer.from_pretrained(folder, use_fast=True)), "
                         "whose offsets align any text")
    aligned_tokens: list = [None] * len(encoded["input_ids"])
    aligned_spans: list = [(0, 0)] * len(encoded["input_ids"])
    for k, i in enumerate(ordinary):
        aligned_tokens[i], aligned_spans[i] = tokens[k], spans[k]
    return aligned_tokens, aligned_spans


def whole_word_offsets(input_ids: Sequence[int], ref: Iterable[int], tokenizer,
                       special_tokens_mask: Sequence[int] | None = None) -> list[tuple[int, int]]:
    """An offset_mapping for transformers 5's DataCollatorForLanguageModeling(whole_word_mask=True)
    that groups the tokens as transformers 4's DataCollatorForWholeWordMask did with `ref`: a
    token continues the word before it when its position is in `ref` or it is a "##" piece;
    special tokens get (0, 0). Every example of a batch needs the same length (padding=
    "max_length"), as that collator does not pad offset_mapping.

        example["offset_mapping"] = whole_word_offsets(example["input_ids"], ref, tokenizer,
                                                       example["special_tokens_mask"])
    """
    ids = list(input_ids)
    if special_tokens_mask is None:
        special_tokens_mask = tokenizer.get_special_tokens_mask(ids, already_has_special_tokens=True)
    if len(special_tokens_mask) != len(ids):
        raise ValueError(f"special_tokens_mask has {len(special_tokens_mask)} entries for {len(ids)} input_ids")
    continuing = {int(i) for i in ref}
    tokens = tokenizer.convert_ids_to_tokens(ids)
    offsets, end, previous_special = [], 0, True
    for i, (token, special) in enumerate(zip(tokens, special_tokens_mask)):
        if special:
            offsets.append((0, 0))
            previous_special = True
            continue
        joins = not previous_special and (i in continuing or token.startswith("##"))
        start = end if joins else end + 1  # a gap starts a new word
        end = start + 1
        offsets.append((start, end))
        previous_special = False
    return offsets
