"""Pretraining data: raw lines -> character windows -> length-bucketed batches -> masked inputs.

The model must see at training time exactly what `Segmenter` feeds it at inference
(junctions.TextPlan): a line's non-space characters, one id per character, as
`[CLS] c1 … cn [SEP]`, a long line cut into windows of at most max_length - 2 characters
(text.make_windows). Everything here is deterministic in (seed, epoch, batch index), so a
resumed run needs only those numbers to continue with the very same batches and masks.

Memory: the corpus is kept as one flat array of ids (uint16 while the vocabulary allows)
plus a (start, length) pair per window; 59 M characters take ~120 MB.
"""
from __future__ import annotations

import hashlib
import logging
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..run.lines import chunked
from ..text.runs import code_points
from ..text.vocab import SPECIAL_TOKENS, CharVocab
from ..text.windows import collate_flat, make_windows, padded_length
from .corpus import iter_raw_lines

logger = logging.getLogger(__name__)

CHUNK_LINES = 100_000  # lines turned into code points at once: bounds the peak memory
NUM_CODE_POINTS = 0x110000
HELDOUT_SEED = 20240601  # fixed, so that runs with different --seed evaluate on the same lines
EVAL_MASK_RATE = 0.15  # the eval protocol is fixed whatever the training masking is: comparable curves


def model_sequence(line: str) -> str:
    """The characters the model reads for a line: every non-space character (see TextPlan)."""
    return "".join(line.split())


def _chunks(paths: list[str], min_chars: int):
    """Model sequences of the corpus lines, CHUNK_LINES at a time."""
    sequences = (model_sequence(line) for line in iter_raw_lines(paths))
    return chunked((s for s in sequences if len(s) >= min_chars), CHUNK_LINES)


def scan_corpus(paths: list[str], min_chars: int) -> tuple[np.ndarray, int]:
    """(count of every code point, number of usable lines): one cheap pass (np.bincount)."""
    counts = np.zeros(NUM_CODE_POINTS, dtype=np.int64)
    lines = 0
    for chunk in _chunks(paths, min_chars):
        counts += np.bincount(code_points("".join(chunk), np.uint32), minlength=NUM_CODE_POINTS)
        lines += len(chunk)
    return counts, lines


def build_vocab(counts: np.ndarray, max_size: int, min_count: int) -> CharVocab:
    """Specials first, then characters by count (CharVocab.build normalizes them)."""
    seen = np.flatnonzero(counts)
    return CharVocab.build({chr(cp): int(counts[cp]) for cp in seen}, max_size=max_size, min_count=min_count)


def id_table(vocab: CharVocab, counts: np.ndarray) -> np.ndarray:
    """code point -> id for every code point of the corpus (others -> [UNK]), so that encoding
    is one vectorized lookup instead of a Python call per character."""
    table = np.full(NUM_CODE_POINTS, vocab.unk_id, dtype=np.int32)
    for cp in np.flatnonzero(counts):
        table[cp] = vocab.char_id(chr(cp))
    return table


def corpus_fingerprint(paths: list[str]) -> list[dict]:
    """Size and hash of the first MiB of each file: enough to notice a changed corpus on resume."""
    prints = []
    for path in paths:
        with open(path, "rb") as handle:
            head = hashlib.sha1(handle.read(1 << 20)).hexdigest()
        prints.append({"path": str(Path(path).resolve()), "bytes": Path(path).stat().st_size, "sha1_first_mib": head})
    return prints


@dataclass
class WindowStore:
    """Windows of character ids: window i is ids[starts[i] : starts[i] + lengths[i]]."""

    ids: np.ndarray
    starts: np.ndarray  # (N,) int64
    lengths: np.ndarray  # (N,) int32

    def __len__(self) -> int:
        return len(self.starts)

    @property
    def num_chars(self) -> int:
        return int(self.lengths.sum())


class _StoreBuilder:
    def __init__(self, dtype):
        self.dtype, self.ids, self.starts, self.lengths, self.size = dtype, [], [], [], 0

    def add(self, ids: np.ndarray, line_lengths: np.ndarray, max_chars: int) -> None:
        offsets = np.concatenate([[0], np.cumsum(line_lengths)[:-1]]) + self.size
        short = line_lengths <= max_chars
        self.starts.append(offsets[short])
        self.lengths.append(line_lengths[short])
        for offset, length in zip(offsets[~short].tolist(), line_lengths[~short].tolist()):
            windows = make_windows(length, max_chars, 0)
            self.starts.append(np.array([offset + w.start for w in windows], dtype=np.int64))
            self.lengths.append(np.array([w.end - w.start for w in windows], dtype=np.int64))
        self.ids.append(ids.astype(self.dtype))
        self.size += len(ids)

    def build(self) -> WindowStore:
        cat = lambda parts, dtype: np.concatenate(parts).astype(dtype) if parts else np.zeros(0, dtype)  # noqa: E731
        return WindowStore(cat(self.ids, self.dtype), cat(self.starts, np.int64), cat(self.lengths, np.int32))


def encode_corpus(
    paths: list[str], vocab: CharVocab, table: np.ndarray, max_chars: int, heldout: np.ndarray, min_chars: int
) -> tuple[WindowStore, WindowStore]:
    """(train windows, held-out windows); `heldout` holds the sorted indices of held-out lines."""
    dtype = np.uint16 if len(vocab) <= np.iinfo(np.uint16).max else np.int32
    train, held = _StoreBuilder(dtype), _StoreBuilder(dtype)
    first_line = 0
    for chunk in _chunks(paths, min_chars):
        ids = table[code_points("".join(chunk), np.uint32)]
        lengths = np.fromiter((len(s) for s in chunk), dtype=np.int64, count=len(chunk))
        is_held = np.zeros(len(chunk), dtype=bool)
        lo, hi = np.searchsorted(heldout, [first_line, first_line + len(chunk)])
        is_held[heldout[lo:hi] - first_line] = True
        char_held = np.repeat(is_held, lengths)
        train.add(ids[~char_held], lengths[~is_held], max_chars)
        held.add(ids[char_held], lengths[is_held], max_chars)
        first_line += len(chunk)
    return train.build(), held.build()


def choose_heldout(num_lines: int, wanted: int) -> np.ndarray:
    """Sorted indices of the held-out lines: a fixed draw, at most a tenth of the corpus."""
    count = min(wanted, num_lines // 10)
    return np.sort(np.random.default_rng(HELDOUT_SEED).choice(num_lines, size=count, replace=False))


class BatchPlan:
    """The batches of an epoch: lists of window indices, deterministic in (seed, epoch).

    bucketing=True: windows are grouped by padded length and each batch holds ~batch_tokens
    padded tokens of one length, so almost no compute goes to padding (lines are short and
    uneven: median 21-35 characters, 7% longer than 126). bucketing=False: random batches of
    the same mean size padded to their longest window (the baseline it is measured against).
    """

    def __init__(self, lengths: np.ndarray, batch_tokens: int, pad_multiple: int, seed: int, bucketing: bool = True):
        self.lengths = lengths
        self.batch_tokens = batch_tokens
        self.pad_multiple = pad_multiple
        self.seed = seed
        self.bucketing = bucketing
        self._cache: tuple[int, list[np.ndarray]] | None = None

    def epoch(self, epoch: int) -> list[np.ndarray]:
        if self._cache is not None and self._cache[0] == epoch:
            return self._cache[1]
        rng = np.random.default_rng([self.seed, epoch])
        padded = padded_length(self.lengths, self.pad_multiple)
        batches: list[np.ndarray] = []
        if self.bucketing:
            for tokens in np.unique(padded):
                members = np.flatnonzero(padded == tokens)
                members = members[rng.permutation(len(members))]
                size = max(1, self.batch_tokens // int(tokens))
                batches.extend(members[i : i + size] for i in range(0, len(members), size))
            batches = [batches[i] for i in rng.permutation(len(batches))]
        else:
            order = rng.permutation(len(self.lengths))
            size = max(1, round(self.batch_tokens / max(float(padded.mean()), 1.0)))
            batches = [order[i : i + size] for i in range(0, len(order), size)]
        self._cache = (epoch, batches)
        return batches


def collate(
    store: WindowStore, indices: np.ndarray, vocab: CharVocab, pad_multiple: int, max_tokens: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Windows -> (ids (B, T) int64 as `[CLS] c1 … cn [SEP] [PAD]…`, lengths (B,) characters).
    T is rounded up to pad_multiple, but never past max_tokens (the model's positions)."""
    lengths = store.lengths[indices].astype(np.int64)
    ids, _ = collate_flat(store.ids, store.starts[indices], lengths, vocab, pad_multiple, max_tokens)
    return ids, lengths


def span_start_rate(rate: float, span_mean: float, max_span: int) -> float:
    """Chance q that a span starts at a character so that spans cover `rate` of them.

    Span lengths are geometric with mean span_mean (clipped at max_span); position j stays
    unmasked when no span starting at j-k reaches it: P = prod_k (1 - q P(L > k)). Spans
    overlap, so q = rate / span_mean would mask too little; solve for q by bisection.
    """
    p = 1.0 / span_mean
    longer = np.array([(1 - p) ** k for k in range(max_span)])  # P(L > k), k = 0..max_span-1
    lo, hi = 0.0, 1.0
    for _ in range(50):
        q = (lo + hi) / 2
        lo, hi = (q, hi) if 1 - np.prod(1 - q * longer) < rate else (lo, q)
    return (lo + hi) / 2


@dataclass
class Masking:
    """Which characters to predict and what the model sees there (BERT's 80/10/10 by default).

    rate: share of characters selected; span_mean > 1 selects whole spans of geometric length
    (mean span_mean, at most max_span characters) instead of single characters, so that a word
    cannot be guessed from its own other half.
    """

    rate: float = 0.3
    span_mean: float = 1.0
    max_span: int = 5
    mask_share: float = 0.8
    random_share: float = 0.1

    def select(self, lengths: np.ndarray, tokens: int, rng: np.random.Generator) -> np.ndarray:
        """(B, T) bool: the selected character positions (never [CLS], [SEP] or padding)."""
        position = np.arange(tokens)
        is_char = (position >= 1) & (position <= lengths[:, None])
        if self.span_mean <= 1.0:
            selected = (rng.random(is_char.shape) < self.rate) & is_char
        else:
            q = span_start_rate(self.rate, self.span_mean, self.max_span)
            starts = (rng.random(is_char.shape) < q) & is_char
            span = np.minimum(rng.geometric(1.0 / self.span_mean, size=is_char.shape), self.max_span)
            # end (exclusive) of the span starting at each position; -1 where none starts. A
            # running maximum along the row tells whether some earlier span still covers j.
            reach = np.maximum.accumulate(np.where(starts, position + span, -1), axis=1)
            selected = (reach > position) & is_char
        if not selected.any():  # a tiny batch: always predict at least one character
            row = int(rng.integers(len(lengths)))
            selected[row, 1 + int(rng.integers(lengths[row]))] = True
        return selected

    def apply(self, ids: np.ndarray, lengths: np.ndarray, vocab: CharVocab, rng: np.random.Generator):
        """-> (inputs (B, T), positions (M,) flat indices into B*T, targets (M,)) for M selected."""
        selected = self.select(lengths, ids.shape[1], rng)
        positions = np.flatnonzero(selected)
        targets = ids.reshape(-1)[positions]
        inputs = ids.copy()
        flat = inputs.reshape(-1)
        draw = rng.random(len(positions))
        to_mask = draw < self.mask_share
        to_random = (draw >= self.mask_share) & (draw < self.mask_share + self.random_share)
        flat[positions[to_mask]] = vocab.mask_id
        flat[positions[to_random]] = rng.integers(len(SPECIAL_TOKENS), len(vocab), size=int(to_random.sum()))
        return inputs, positions, targets


EVAL_MASKING = Masking(rate=EVAL_MASK_RATE, span_mean=1.0, mask_share=1.0, random_share=0.0)


class Corpus:
    """The data of a run: vocabulary, train and held-out windows, batch plan, fixed eval batches.

    config: a PretrainConfig (corpus, min_chars, vocab_size, min_count, eval_lines, max_length,
    batch_tokens, pad_multiple, seed, bucketing). vocab: the run's vocabulary when resuming.
    """

    def __init__(self, config, vocab: CharVocab | None = None):
        started = time.time()
        counts, num_lines = scan_corpus(config.corpus, config.min_chars)
        if num_lines < 2:
            raise ValueError(f"the corpus has {num_lines} usable line(s) of >= {config.min_chars} characters; "
                             "need more text")
        self.vocab = vocab or build_vocab(counts, config.vocab_size, config.min_count)
        heldout = choose_heldout(num_lines, config.eval_lines)
        table = id_table(self.vocab, counts)
        self.train, self.heldout = encode_corpus(config.corpus, self.vocab, table, config.max_length - 2, heldout,
                                                 config.min_chars)
        self.plan = BatchPlan(self.train.lengths, config.batch_tokens, config.pad_multiple, config.seed,
                              config.bucketing)
        self.stats = {
            "files": corpus_fingerprint(config.corpus),
            "lines": num_lines,
            "chars": int(counts.sum()),
            "heldout_lines": len(heldout),
            "train_windows": len(self.train),
            "unk_rate": float(counts[table == self.vocab.unk_id].sum() / max(1, counts.sum())),
        }
        # Fixed eval batches: the same lines with the same masks at every evaluation, in every run.
        rng = np.random.default_rng([HELDOUT_SEED, 1])
        eval_plan = BatchPlan(self.heldout.lengths, config.batch_tokens, config.pad_multiple, HELDOUT_SEED)
        self.eval_batches = []
        for indices in eval_plan.epoch(0) if len(self.heldout) else []:
            ids, lengths = collate(self.heldout, indices, self.vocab, config.pad_multiple, config.max_length)
            self.eval_batches.append((*EVAL_MASKING.apply(ids, lengths, self.vocab, rng), lengths))
        logger.info(
            "corpus: %s lines, %s characters (%.3f%% [UNK]), %s training windows, %s held-out lines; "
            "vocabulary %s (%.1fs)",
            f"{num_lines:,}", f"{self.stats['chars']:,}", 100 * self.stats["unk_rate"], f"{len(self.train):,}",
            f"{len(heldout):,}", len(self.vocab), time.time() - started,
        )
