"""Running the app: uvicorn on a socket bound here (so that --port 0 can say which port it got),
in this process or in --workers N processes (uvicorn's supervisor; each loads the model).

SIGTERM (and Ctrl-C): uvicorn stops taking connections, lets the requests in flight finish (up to
the per-request timeout and a little more), then the process exits 0. uvicorn re-raises the
signal it caught once it has shut down; a handler that does nothing takes it here, so that a
clean shutdown exits 0 rather than dying of the signal.
"""
from __future__ import annotations

import json
import os
import signal
import socket
import sys
from dataclasses import asdict

from .limits import Limits

ENVIRONMENT = "SEGMENTER_SERVE_CONFIG"  # what each --workers process reads (app_from_environment)


def load_segmenter(model=None, standard=None, user_dicts=(), threads=None):
    from ..api import Segmenter

    segmenter = Segmenter(model, standard=standard, num_threads=threads, processes=False)
    for path in user_dicts:
        segmenter.load_userdict(path)
    return segmenter


def app_from_environment():
    """The app of one --workers process, from the settings the command put in the environment."""
    from .app import create_app

    settings = json.loads(os.environ[ENVIRONMENT])
    segmenter = load_segmenter(settings["model"], settings["standard"], settings["user_dicts"], settings["threads"])
    return create_app(segmenter, Limits(**settings["limits"]), token=settings["token"])


def bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # proto named: asyncio sets TCP_NODELAY on the connections of a socket whose proto is
    # IPPROTO_TCP only; with proto 0 each keep-alive answer waited ~40 ms for a delayed ACK
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.set_inheritable(True)
    return sock


def serve(*, host: str = "127.0.0.1", port: int = 8000, model=None, standard=None, user_dicts=(),
          limits: Limits | None = None, token: str | None = None, workers: int = 1, threads: int | None = None,
          log_level: str = "info", segmenter=None) -> int:
    """Serve until SIGTERM or Ctrl-C; 0 once the requests in flight are answered."""
    import uvicorn

    limits = limits or Limits()
    sock = bind(host, port)
    shown_host = f"[{host}]" if ":" in host else host
    common = {"log_level": log_level, "timeout_graceful_shutdown": int(limits.timeout_s) + 5, "access_log": False,
                  "lifespan": "on", "server_header": False}
    previous = signal.signal(signal.SIGTERM, _ignore) if _main_thread() else None
    try:
        if workers > 1:
            from uvicorn.supervisors import Multiprocess

            os.environ[ENVIRONMENT] = json.dumps({
                "model": None if model is None else str(model), "standard": standard,
                "user_dicts": [str(p) for p in user_dicts], "threads": threads, "limits": asdict(limits),
                "token": token})
            config = uvicorn.Config("segmenter.serve.server:app_from_environment", factory=True, workers=workers,
                                    **common)
            _announce(shown_host, sock, workers)
            import inspect

            if "target" in inspect.signature(Multiprocess).parameters:  # uvicorn before 0.36 or so
                Multiprocess(config, target=uvicorn.Server(config).run, sockets=[sock]).run()
            else:
                Multiprocess(config, sockets=[sock]).run()
        else:
            from .app import create_app

            segmenter = segmenter or load_segmenter(model, standard, user_dicts, threads)
            config = uvicorn.Config(create_app(segmenter, limits, token=token), **common)
            _announce(shown_host, sock, workers)
            uvicorn.Server(config).run(sockets=[sock])
    finally:
        sock.close()
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    return 0


def _announce(host: str, sock: socket.socket, workers: int) -> None:
    port = sock.getsockname()[1]
    print(f"segmenter serve: http://{host}:{port}/ ({workers} process{'es' if workers > 1 else ''}; "
          "Ctrl-C or SIGTERM stops it)", file=sys.stderr, flush=True)


def _ignore(signum, frame) -> None:
    """SIGTERM outside uvicorn's own handler (the re-raise after a clean shutdown): nothing to do."""


def _main_thread() -> bool:
    import threading

    return threading.current_thread() is threading.main_thread()
