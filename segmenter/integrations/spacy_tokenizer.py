"""segmenter as a spaCy tokenizer (the `spacy` extra: `pip install "segmenter-heads[spacy]"`).

    >>> import spacy
    >>> nlp = spacy.blank("zh", config={"nlp": {"tokenizer": {"@tokenizers": "segmenter.Tokenizer.v1"}}})
    >>> [t.text for t in nlp("共同创造美好的新世纪")]

spaCy finds "segmenter.Tokenizer.v1" through the entry point group `spacy_tokenizers`
(pyproject.toml), without segmenter being imported first. Its options, in the config's
[nlp.tokenizer] block: `model` (None: the embedded default; a shipped name, a model folder or a
hub name, as in Segmenter(model)), `standard` (None: the model's, else "general"; "pku", "msr",
"ud"), `granularity` ("fine" | "default" | "coarse" | a number in [0, 1]) and `userdict` (a
jieba-format user dictionary file, or None). Another Segmenter keyword becomes an option by a
parameter of create_tokenizer and its name in SEGMENTER_OPTIONS.

The tokens are segment()'s words, with spaCy's whitespace conventions (those of
spacy.util.get_words_and_spaces, which spaCy's own Chinese tokenizers use): Doc.text is the text,
one space after a word is that word's trailing whitespace, and every other run of whitespace is
one token (is_space).

Batching: spaCy's `nlp.pipe(texts)` calls the tokenizer once per text (Language.pipe ->
make_doc), so the segmentation is not batched there; `nlp.tokenizer.pipe(texts)` batches it
through segment_batch (~2x faster on short lines), and `nlp.pipe(nlp.tokenizer.pipe(texts))`
runs the rest of the pipeline on those Docs. The Docs are the same either way.

Saving (nlp.to_disk, to_bytes): the options live in the pipeline's config.cfg; the tokenizer
writes the user dictionary as it stands (config's userdict file plus add_word/load_userdict
calls: every entry with its frequency, tag and forced splits). The model: a shipped name or hub
name is saved as that name; a local model folder is copied into the pipeline
(tokenizer/model/, by Segmenter.save_pretrained), so a saved pipeline stands alone and loads
elsewhere; to_bytes stores the name or path only (no weights). The model loads on first use
(the first text, or the `segmenter` attribute), after from_disk has said which folder to read.
"""
import json
from collections.abc import Callable, Iterable, Iterator
from itertools import islice
from pathlib import Path
from typing import Any

from ..model.profile import granularity_value
from ..standards.levels import standard_named
from ..words.dictionary import UserDictionary

TOKENIZER_NAME = "segmenter.Tokenizer.v1"
# Options of the config passed on to Segmenter as keywords, as they are named there.
SEGMENTER_OPTIONS = ("standard", "granularity")
CONFIG_FILE = "cfg"  # the options at save time, JSON (spaCy's own tokenizers name theirs "cfg")
WORDS_FILE = "user_words.json"  # [[word, freq, tag, pieces], ...]
MODEL_FOLDER = "model"  # the copy of a local model folder
PIPE_BATCH = 1000  # texts per segment_batch call in pipe() (spaCy's nlp.batch_size)


def create_tokenizer(
    model: str | None = None,
    granularity: str | float = "default",
    userdict: str | None = None,
    standard: str | None = None,
) -> Callable[[Any], "SegmenterTokenizer"]:
    """The registered function: spaCy calls it with the [nlp.tokenizer] options, then calls what
    it returns with the nlp object."""

    def make_tokenizer(nlp) -> "SegmenterTokenizer":
        return SegmenterTokenizer(nlp.vocab, model=model, granularity=granularity, userdict=userdict, standard=standard)

    return make_tokenizer


class SegmenterTokenizer:
    """A spaCy tokenizer (text -> Doc) over a segmenter.Segmenter made on first use."""

    def __init__(self, vocab, model: str | None = None, granularity: str | float = "default",
                 userdict: str | None = None, standard: str | None = None):
        granularity_value(granularity)  # a bad option fails here, before any model loads
        if standard is not None:
            standard_named(standard)
        if model is not None and not isinstance(model, str):
            model = str(model)
        if userdict is not None and not isinstance(userdict, str):
            userdict = str(userdict)
        self.vocab = vocab
        self.cfg: dict[str, Any] = {"model": model, "granularity": granularity, "userdict": userdict,
                                    "standard": standard}
        self._model_copy: Path | None = None  # the pipeline's copy of a model folder (from_disk)
        self._saved_words: list | None = None  # the user dictionary of a saved pipeline, if any
        self._segmenter = None

    # -- the segmenter ---------------------------------------------------------------------------
    @property
    def segmenter(self):
        """The Segmenter behind the tokenizer, loaded on first use."""
        if self._segmenter is None:
            from ..api import Segmenter

            model = self._model_copy if self._model_copy is not None else self.cfg["model"]
            segmenter = Segmenter(model, **{name: self.cfg[name] for name in SEGMENTER_OPTIONS})
            if self._saved_words is not None:
                segmenter.user_dictionary.restore(self._saved_words)
            elif self.cfg["userdict"] is not None:
                segmenter.load_userdict(self.cfg["userdict"])
            self._segmenter = segmenter
        return self._segmenter

    def add_word(self, word: str, freq: int | None = None, tag: str | None = None) -> None:
        """Segmenter.add_word: keep `word` whole (saved with the pipeline)."""
        self.segmenter.add_word(word, freq, tag)

    def load_userdict(self, f) -> int:
        """Segmenter.load_userdict: a jieba-format dictionary (saved with the pipeline)."""
        return self.segmenter.load_userdict(f)

    # -- tokenizing ------------------------------------------------------------------------------
    def __call__(self, text: str):
        return self._doc(self.segmenter.segment(text))

    def pipe(self, texts: Iterable[str], batch_size: int = PIPE_BATCH) -> Iterator:
        """Docs of the texts, in order; each `batch_size` texts are segmented as one batch."""
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive int, got {batch_size!r}")
        texts = iter(texts)
        while True:
            chunk = list(islice(texts, batch_size))
            if not chunk:
                return
            for words in self.segmenter.segment_batch(chunk, show_progress=False):
                yield self._doc(words)

    def _doc(self, words: list[str]):
        from spacy.tokens import Doc

        tokens, spaces = spacy_words(words)
        return Doc(self.vocab, words=tokens, spaces=spaces)

    def score(self, examples, **kwargs) -> dict[str, Any]:
        """Token accuracy, precision, recall and F1 against gold Docs (nlp.evaluate uses it)."""
        from spacy.scorer import Scorer

        return Scorer.score_tokenization(examples)

    # -- saving ----------------------------------------------------------------------------------
    def _user_words(self) -> list:
        if self._segmenter is not None:
            return self._segmenter.user_dictionary.records()
        if self._saved_words is not None:
            return [list(entry) for entry in self._saved_words]
        dictionary = UserDictionary()
        if self.cfg["userdict"] is not None:
            dictionary.load(self.cfg["userdict"])
        return dictionary.records()

    def _local_model(self) -> Path | None:
        """The model folder on this machine, if the model is one (not a shipped or hub name);
        a folder of a shipped name's name counts as a folder, as in Segmenter."""
        if self._model_copy is not None:
            return self._model_copy
        model = self.cfg["model"]
        return Path(model).expanduser() if model is not None and Path(model).expanduser().is_dir() else None

    def to_bytes(self, **kwargs) -> bytes:
        """The options and the user dictionary; the model by name or path, not its weights."""
        data = {"cfg": self.cfg, "user_words": self._user_words()}
        return json.dumps(data, ensure_ascii=False).encode("utf-8")

    def from_bytes(self, data: bytes, **kwargs) -> "SegmenterTokenizer":
        """The user dictionary of to_bytes; the options are the config's (spaCy's config.cfg)."""
        self._saved_words = json.loads(data.decode("utf-8"))["user_words"]
        self._segmenter = None
        return self

    def to_disk(self, path, **kwargs) -> None:
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        folder = self._local_model()
        if folder is not None:  # a saved pipeline stands alone: its own copy of the model
            self.segmenter.save_pretrained(path / MODEL_FOLDER)
        saved = {**self.cfg, "model_copied": folder is not None}
        (path / CONFIG_FILE).write_text(json.dumps(saved, ensure_ascii=False), encoding="utf-8")
        (path / WORDS_FILE).write_text(json.dumps(self._user_words(), ensure_ascii=False), encoding="utf-8")

    def from_disk(self, path, **kwargs) -> "SegmenterTokenizer":
        """The user dictionary, and the copied model folder when the config still names the folder
        it was copied from (a config edited to another model loads that one)."""
        path = Path(path)
        saved = json.loads((path / CONFIG_FILE).read_text(encoding="utf-8"))
        self._saved_words = json.loads((path / WORDS_FILE).read_text(encoding="utf-8"))
        copy = path / MODEL_FOLDER
        same_model = saved.get("model_copied") and saved.get("model") == self.cfg["model"]
        self._model_copy = copy if same_model and copy.is_dir() else None
        self._segmenter = None
        return self

    def __reduce__(self):
        """Pickling (nlp.pipe(n_process=...) with spawn): the options and words, not the loaded model."""
        return _unpickle, (self.vocab, self.cfg, self._model_copy, self._user_words())


def _unpickle(vocab, cfg, model_copy, words) -> SegmenterTokenizer:
    tokenizer = SegmenterTokenizer(vocab, **cfg)
    tokenizer._model_copy, tokenizer._saved_words = model_copy, words
    return tokenizer


def spacy_words(words: list[str]) -> tuple:
    """(words, spaces) for spacy.tokens.Doc from words that tile a text: one " " after a word
    becomes its trailing space, and consecutive whitespace words join into one token, as
    spacy.util.get_words_and_spaces makes them (which is quadratic in the text's length)."""
    tokens: list[str] = []
    spaces: list[bool] = []
    for word in words:
        if not word:
            continue
        if word.isspace():
            if tokens and not spaces[-1] and not tokens[-1].isspace() and word[0] == " ":
                spaces[-1] = True
                word = word[1:]
                if not word:
                    continue
            if tokens and tokens[-1].isspace() and not spaces[-1]:
                tokens[-1] += word
                continue
        tokens.append(word)
        spaces.append(False)
    return tokens, spaces
