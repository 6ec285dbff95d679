"""How many cores this process may use, and how to share them among worker processes.

A leaf module (it imports nothing from the package): the engines (model.py), the worker
processes (parallel.py) and the benchmarks all size their thread pools from it.
"""
from __future__ import annotations

import contextlib
import os


def available_cores() -> int:
    """Cores this process may run on (the affinity mask in containers and under taskset)."""
    with contextlib.suppress(AttributeError, OSError):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def threads_per_worker(workers: int, cores: int | None = None) -> int:
    """Threads for each of `workers` processes so that together they do not oversubscribe the cores."""
    return max(1, (cores or available_cores()) // workers)
