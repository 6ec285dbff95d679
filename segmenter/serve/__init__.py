"""`segmenter serve`: an HTTP service (Starlette on uvicorn) around one Segmenter, and a page.

    POST /segment   {"texts": [...], "standard", "granularity", "mode", "offsets"} -> {"words": [[...]]}
    POST /explain   {"text" or "texts", "standard", "granularity"} -> why each junction was cut or joined
    GET  /health    {"status": "ok", ...} (never needs the token)
    GET  /metrics   Prometheus text: requests, texts, characters, latency, batches
    GET  /          the page (page.html: no build step, no network), never needs the token

limits.py: the request limits and the parsing of a request's JSON (every bad body is a 4xx with a
JSON error, never a traceback); batching.py: requests that arrive together are segmented in one
batch, one call per (standard, granularity, mode, offsets) group, in a thread; metrics.py: the
counters; app.py: the routes; server.py: uvicorn, --workers, SIGTERM (requests in flight finish,
exit 0). The words are Segmenter.segment_batch's (tokenize_batch's with offsets).
"""
from __future__ import annotations

from .limits import Limits, RequestError

__all__ = ["Limits", "RequestError", "create_app"]


def create_app(segmenter, limits: Limits | None = None, **options):
    """The ASGI app (Starlette) serving `segmenter`; needs the `serve` extra."""
    from .app import create_app as _create

    return _create(segmenter, limits, **options)
