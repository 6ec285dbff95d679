"""Serve segmentation over HTTP: POST /segment, POST /explain, GET /health, GET /metrics, and a page at /.

Needs the serve extra: pip install 'segmenter-heads[serve]'. Listens on 127.0.0.1 unless --host
says otherwise; with --token TOKEN every request but /health and the page needs the header
`Authorization: Bearer TOKEN`. SIGTERM or Ctrl-C: the requests in flight are answered, then exit 0.

  curl -s localhost:8000/segment -d '{"texts": ["我爱北京天安门"]}'
"""
from __future__ import annotations

import argparse
from pathlib import Path

from . import CLIError
from .options import positive
from .segment import STANDARD_CHOICES


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from ..serve.limits import Limits

    defaults = Limits()
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to listen on (default: 127.0.0.1, this machine only; 0.0.0.0: every interface)")
    parser.add_argument("--port", type=int, default=8000, help="port (default: 8000; 0: any free port, printed)")
    parser.add_argument("-m", "--model", default=None,
                        help="model folder, hub name, or a shipped model: default (the embedded one), fast")
    parser.add_argument("-s", "--standard", default=None, choices=STANDARD_CHOICES,
                        help="the standard of requests that name none (default: the model's own)")
    parser.add_argument("-u", "--user-dict", action="append", default=[], metavar="FILE",
                        help="a jieba-format user dictionary (`word [freq] [tag]` a line) whose words stay whole; "
                             "repeatable")
    parser.add_argument("--workers", type=positive(int), default=1, metavar="N",
                        help="server processes, each with its own copy of the model (default: 1)")
    parser.add_argument("--threads", type=positive(int), default=None,
                        help="threads of each process's engine (default: all cores)")
    parser.add_argument("--token", default=None,
                        help="require `Authorization: Bearer TOKEN` on every request but /health and the page")
    parser.add_argument("--max-body-bytes", type=positive(int), default=defaults.max_body_bytes, metavar="N",
                        help=f"largest request body; larger: 413 (default: {defaults.max_body_bytes})")
    parser.add_argument("--max-texts", type=positive(int), default=defaults.max_texts, metavar="N",
                        help=f"texts of one request; more: 400 (default: {defaults.max_texts})")
    parser.add_argument("--max-chars", type=positive(int), default=defaults.max_chars, metavar="N",
                        help=f"characters of one text; more: 400 (default: {defaults.max_chars})")
    parser.add_argument("--timeout", type=positive(float), default=defaults.timeout_s, metavar="SECONDS",
                        help=f"one request's wait for its words; longer: 504 (default: {defaults.timeout_s:g})")
    parser.add_argument("--batch-wait", type=float, default=defaults.batch_wait_ms, metavar="MS",
                        help="milliseconds the batching queue collects requests that arrive together "
                             f"(default: {defaults.batch_wait_ms:g})")
    parser.add_argument("-q", "--quiet", action="store_true", help="log warnings and errors only")


def run(args: argparse.Namespace) -> int:
    # Before the model loads; a missing one is named with its extra (cli.error_message, EXTRAS).
    import starlette  # noqa: F401
    import uvicorn  # noqa: F401

    from ..serve.limits import Limits
    from ..serve.server import serve
    from .options import model_folder

    for path in args.user_dict:
        if not Path(path).is_file():
            raise CLIError(f"-u {path}: no such file")
    if not 0 <= args.port <= 65535:
        raise CLIError(f"--port must be in 0-65535, got {args.port}")
    if args.batch_wait < 0:
        raise CLIError(f"--batch-wait must be >= 0, got {args.batch_wait:g}")
    folder = model_folder(args.model)
    limits = Limits(max_body_bytes=args.max_body_bytes, max_texts=args.max_texts, max_chars=args.max_chars,
                    timeout_s=args.timeout, batch_wait_ms=args.batch_wait)
    try:
        return serve(host=args.host, port=args.port, model=folder, standard=args.standard, user_dicts=args.user_dict,
                     limits=limits, token=args.token, workers=args.workers, threads=args.threads,
                     log_level="warning" if args.quiet else "info")
    except OSError as err:
        if err.errno in (98, 48, 13, 99):  # in use, permission denied, not this machine's address
            raise CLIError(f"cannot listen on {args.host}:{args.port}: {err.strerror}") from None
        raise
