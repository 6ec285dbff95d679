"""The service's limits, and a request body -> checked arguments (every bad body: a RequestError,
a 4xx with a JSON error that says what was wrong; never a traceback).

Limits: the body's bytes (413, checked on Content-Length before reading and while reading), the
texts of one request and the characters of one text (400, naming the limit and the text), the
seconds one request may wait for its words (504).
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import NamedTuple

from ..model.profile import GRANULARITY_NAMES
from ..standards.levels import DEFAULT_STANDARD
from ..standards.rules import STANDARD_NAMES

MODES = ("default", "search")
EXPLAIN_TEXTS, EXPLAIN_CHARS = 100, 20_000  # what one /explain request may ask for
# The names a request may give, the default standard first (the page's first choice).
STANDARDS = tuple(sorted(STANDARD_NAMES, key=lambda name: name != DEFAULT_STANDARD))
GRANULARITIES = tuple(GRANULARITY_NAMES)


@dataclass(frozen=True)
class Limits:
    max_body_bytes: int = 1 << 20  # 1 MiB
    max_texts: int = 1000  # texts of one request
    max_chars: int = 10_000  # characters of one text
    timeout_s: float = 30.0  # one request's wait for its words
    batch_wait_ms: float = 5.0  # how long the batching queue collects requests before a batch
    max_batch_chars: int = 200_000  # a batch is cut here (a request is never split)

    def __post_init__(self):
        for name in ("max_body_bytes", "max_texts", "max_chars", "max_batch_chars"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name} must be a positive int, got {value!r}")
        for name in ("timeout_s", "batch_wait_ms"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value) or value < 0:
                raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")


class RequestError(Exception):
    """A request the service refuses: its HTTP status and a JSON body {"error": message, ...}."""

    def __init__(self, status: int, message: str, **extra):
        super().__init__(message)
        self.status, self.message, self.extra = status, message, extra

    def body(self) -> dict:
        return {"error": self.message, **self.extra}


class SegmentRequest(NamedTuple):
    texts: list[str]
    standard: str | None
    granularity: float | None
    mode: str
    offsets: bool

    @property
    def key(self) -> tuple:
        """Requests of the same key are segmented in one call (batching.py)."""
        return (self.standard, self.granularity, self.mode, self.offsets)


def decode_json(body: bytes, limits: Limits) -> dict:
    """A JSON object from a request body, or a RequestError (400, 413)."""
    if len(body) > limits.max_body_bytes:
        raise body_too_large(limits)
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as err:
        raise RequestError(400, f"the body is not UTF-8 (byte {err.start}: {body[err.start:err.start + 1]!r}); "
                                "send JSON encoded as UTF-8") from None
    if not text.strip():
        raise RequestError(400, 'the body is empty; send a JSON object such as {"texts": ["我爱北京天安门"]}')
    try:
        value = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as err:
        detail = f"{err.msg} at line {err.lineno} column {err.colno}" if isinstance(err, json.JSONDecodeError) \
            else "nested too deeply"
        raise RequestError(400, f"malformed JSON: {detail}") from None
    if not isinstance(value, dict):
        raise RequestError(400, f"the body must be a JSON object, got {_kind(value)}")
    return value


def body_too_large(limits: Limits) -> RequestError:
    return RequestError(413, f"the body is larger than the limit of {limits.max_body_bytes} bytes (--max-body-bytes)",
                        limit="max_body_bytes", max=limits.max_body_bytes)


def _kind(value) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null",
            int: "a number", float: "a number"}.get(type(value), type(value).__name__)


def _check_keys(body: dict, allowed: tuple[str, ...]) -> None:
    unknown = sorted(set(body) - set(allowed))
    if unknown:
        raise RequestError(400, f"unknown field{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}; "
                                f"the fields are {', '.join(allowed)}")


def check_texts(texts, limits: Limits, field: str = "texts") -> list[str]:
    if not isinstance(texts, list):
        raise RequestError(400, f'"{field}" must be an array of strings, got {_kind(texts)}')
    if not texts:
        raise RequestError(400, f'"{field}" is empty; send at least one text')
    if len(texts) > limits.max_texts:
        raise RequestError(400, f'"{field}" has {len(texts)} texts, more than the limit of {limits.max_texts} '
                                "(--max-texts)", limit="max_texts", max=limits.max_texts)
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise RequestError(400, f'"{field}"[{i}] must be a string, got {_kind(text)}')
        if len(text) > limits.max_chars:
            raise RequestError(400, f'"{field}"[{i}] has {len(text)} characters, more than the limit of '
                                    f"{limits.max_chars} (--max-chars); split it into lines",
                               limit="max_chars", max=limits.max_chars, index=i)
        if any(0xD800 <= ord(c) <= 0xDFFF for c in text):  # a lone surrogate from a \ud800 escape
            raise RequestError(400, f'"{field}"[{i}] holds a lone surrogate (\\ud800-\\udfff), not a character')
    return texts


def check_standard(value) -> str | None:
    if value is None or value in STANDARDS:
        return value
    raise RequestError(400, f'"standard" must be one of {", ".join(STANDARDS)} or null, got {value!r}')


def check_granularity(value) -> float | None:
    from ..model.profile import granularity_value

    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise RequestError(400, f'"granularity" must be one of {", ".join(GRANULARITIES)}, a number in [0, 1] '
                                f"or null, got {_kind(value)}")
    try:
        return float(granularity_value(value))
    except (ValueError, TypeError) as err:
        raise RequestError(400, f'"granularity": {err}') from None


def parse_segment(body: dict, limits: Limits) -> SegmentRequest:
    if "texts" not in body:
        hint = ' (one text: {"texts": ["..."]})' if "text" in body else ""
        raise RequestError(400, f'"texts" is missing{hint}')
    _check_keys(body, ("texts", "standard", "granularity", "mode", "offsets"))
    texts = check_texts(body["texts"], limits)
    mode = body.get("mode", "default")
    if mode is None:
        mode = "default"
    if mode not in MODES:
        raise RequestError(400, f'"mode" must be "default" or "search", got {mode!r}')
    offsets = body.get("offsets", False)
    if offsets is None:
        offsets = False
    if not isinstance(offsets, bool):
        raise RequestError(400, f'"offsets" must be true or false, got {_kind(offsets)}')
    return SegmentRequest(texts, check_standard(body.get("standard")), check_granularity(body.get("granularity")),
                          mode, offsets)


def parse_explain(body: dict, limits: Limits) -> tuple[list[str], str | None, float | None]:
    """The texts to explain ("text": one, or "texts"), the standard and granularity."""
    _check_keys(body, ("text", "texts", "standard", "granularity"))
    if ("text" in body) == ("texts" in body):
        raise RequestError(400, 'give "text" (one string) or "texts" (an array of strings), one of them')
    if "text" in body and not isinstance(body["text"], str):
        raise RequestError(400, f'"text" must be a string, got {_kind(body["text"])}')
    texts = check_texts([body["text"]] if "text" in body else body["texts"], limits,
                        "text" if "text" in body else "texts")
    explain_limit = min(limits.max_texts, EXPLAIN_TEXTS)
    if len(texts) > explain_limit:
        raise RequestError(400, f"/explain takes at most {explain_limit} texts, got {len(texts)}",
                           limit="max_texts", max=explain_limit)
    if sum(map(len, texts)) > EXPLAIN_CHARS:  # a record for each place between two characters
        raise RequestError(400, f"/explain takes at most {EXPLAIN_CHARS} characters in all, got "
                                f"{sum(map(len, texts))}", limit="explain_chars", max=EXPLAIN_CHARS)
    return texts, check_standard(body.get("standard")), check_granularity(body.get("granularity"))
