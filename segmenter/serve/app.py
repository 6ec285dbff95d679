"""The routes (Starlette). Every answer but the page and /metrics is JSON; every refusal is a 4xx
with {"error": ...} (and "limit" where a limit was passed); an unexpected error is a 500 with
{"error": "internal error"}, its traceback in the server's log only."""
from __future__ import annotations

import asyncio
import hmac
import logging
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from importlib import resources

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from .batching import Batcher, Views
from .limits import (
    GRANULARITIES,
    STANDARDS,
    Limits,
    RequestError,
    body_too_large,
    decode_json,
    parse_explain,
    parse_segment,
)
from .metrics import Metrics

log = logging.getLogger("segmenter.serve")


def page_html() -> str:
    return resources.files("segmenter.serve").joinpath("page.html").read_text(encoding="utf-8")


async def read_body(request: Request, limits: Limits) -> bytes:
    """The body, refused (413) once it passes limits.max_body_bytes: on its Content-Length before
    reading it, else while reading."""
    length = request.headers.get("content-length")
    if length is not None and not length.isdigit():
        raise RequestError(400, f"Content-Length must be a number of bytes, got {length!r}")
    chunks, size = [], 0
    try:
        if length is not None and int(length) > limits.max_body_bytes:
            await _drain(request.stream())
            raise body_too_large(limits)
        stream = request.stream()
        async for chunk in stream:
            size += len(chunk)
            if size > limits.max_body_bytes:
                await _drain(stream)
                raise body_too_large(limits)
            chunks.append(chunk)
    except ClientDisconnect:
        raise RequestError(400, "the client went away before the body was read") from None
    return b"".join(chunks)


DRAIN_BYTES, DRAIN_SECONDS = 128 << 20, 5.0


async def _drain(stream) -> None:
    """Read and drop what is left of a body too large (up to DRAIN_BYTES, for DRAIN_SECONDS), so
    that a client that sends it all before reading (most do) gets the 413 rather than a reset
    connection; past those, the connection is closed on it."""
    deadline, size = time.monotonic() + DRAIN_SECONDS, 0
    async for chunk in stream:
        size += len(chunk)
        if size > DRAIN_BYTES or time.monotonic() > deadline:
            return


def json_error(err: RequestError) -> JSONResponse:
    headers = {"WWW-Authenticate": "Bearer"} if err.status == 401 else None
    if err.status == 413:
        headers = {"Connection": "close"}  # the rest of a large body is not read
    return JSONResponse(err.body(), status_code=err.status, headers=headers)


def create_app(segmenter, limits: Limits | None = None, *, token: str | None = None,
               threads: int = 1) -> Starlette:
    """The app serving `segmenter`. token: every route but / and /health needs
    `Authorization: Bearer TOKEN` (else 401). threads: worker threads that segment (each batch
    runs in one; the Segmenter shares a batch out to the cores itself)."""
    limits = limits or Limits()
    metrics = Metrics()
    views = Views(segmenter)
    executor = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="segmenter-serve")
    batcher = Batcher(views, limits, metrics, executor)
    page = page_html()
    expected = f"Bearer {token}".encode() if token else None

    def authorized(request: Request) -> bool:
        if expected is None:
            return True
        given = request.headers.get("authorization", "").encode("utf-8", "replace")
        return hmac.compare_digest(given, expected)

    def endpoint(path: str, handler, protected: bool = True):
        async def run(request: Request) -> Response:
            started = time.perf_counter()
            metrics.in_flight += 1
            texts = chars = 0
            try:
                if protected and not authorized(request):
                    raise RequestError(401, "this service needs a token: send the header 'Authorization: Bearer "
                                            "TOKEN' (segmenter serve --token)")
                response, texts, chars = await handler(request)
            except RequestError as err:
                response = json_error(err)
            except Exception:
                log.exception("%s %s failed", request.method, path)
                response = JSONResponse({"error": "internal error (see the server's log)"}, status_code=500)
            finally:
                metrics.in_flight -= 1
            metrics.request(path, response.status_code, time.perf_counter() - started, texts, chars)
            return response

        return run

    async def segment(request: Request):
        body = decode_json(await read_body(request, limits), limits)
        parsed = parse_segment(body, limits)
        found = await batcher.segment(parsed)
        answer = {"tokens": found, "words": [[w for w, _, _ in t] for t in found]} if parsed.offsets \
            else {"words": found}
        return JSONResponse(answer), len(parsed.texts), sum(map(len, parsed.texts))

    async def explain(request: Request):
        body = decode_json(await read_body(request, limits), limits)
        texts, standard, granularity = parse_explain(body, limits)
        loop = asyncio.get_running_loop()
        try:
            found = await asyncio.wait_for(
                loop.run_in_executor(executor, explain_texts, views.at(standard), texts, granularity),
                limits.timeout_s or None)
        except asyncio.TimeoutError:
            raise RequestError(504, f"no explanation within the timeout of {limits.timeout_s:g} s (--timeout)",
                               limit="timeout_s", max=limits.timeout_s) from None
        return JSONResponse({"explanations": found}), len(texts), sum(map(len, texts))

    async def health(request: Request):
        return JSONResponse({"status": "ok", "model": segmenter.folder.name, "engine": segmenter.engine,
                             "standard": segmenter.standard.name, "standards": list(STANDARDS),
                             "granularities": list(GRANULARITIES), "token": expected is not None,
                             "limits": {"max_body_bytes": limits.max_body_bytes, "max_texts": limits.max_texts,
                                        "max_chars": limits.max_chars, "timeout_s": limits.timeout_s}}), 0, 0

    async def show_metrics(request: Request):
        return PlainTextResponse(metrics.render(), media_type="text/plain; version=0.0.4"), 0, 0

    async def show_page(request: Request):
        return HTMLResponse(page, headers={"Cache-Control": "no-store"}), 0, 0

    async def http_error(request: Request, exc: HTTPException) -> Response:
        message = {404: f"no such path {request.url.path!r}: the paths are /, /segment, /explain, /health, "
                        "/metrics", 405: f"{request.method} is not allowed on {request.url.path}"}
        return JSONResponse({"error": message.get(exc.status_code, exc.detail)}, status_code=exc.status_code,
                            headers=getattr(exc, "headers", None))

    @asynccontextmanager
    async def lifespan(app):
        batcher.start()
        try:
            yield
        finally:
            await batcher.stop()
            executor.shutdown(wait=True)

    routes = [
        Route("/", endpoint("/", show_page, protected=False), methods=["GET"]),
        Route("/health", endpoint("/health", health, protected=False), methods=["GET"]),
        Route("/metrics", endpoint("/metrics", show_metrics), methods=["GET"]),
        Route("/segment", endpoint("/segment", segment), methods=["POST"]),
        Route("/explain", endpoint("/explain", explain), methods=["POST"]),
    ]
    app = Starlette(routes=routes, lifespan=lifespan, exception_handlers={HTTPException: http_error})
    app.state.metrics, app.state.limits = metrics, limits
    return app


def explain_texts(segmenter, texts: list[str], granularity=None) -> list[dict]:
    """words.explain's records of `texts` as `segmenter` segments them (its standard, word table,
    conventions and user dictionary)."""
    from ..words.explain import explain

    plans = segmenter.score_texts(texts, show_progress=False)
    return explain(plans, segmenter.profile, segmenter.level(granularity), word_table=segmenter.word_table,
                   conventions=segmenter.conventions, dictionary=segmenter.user_dictionary.snapshot())
