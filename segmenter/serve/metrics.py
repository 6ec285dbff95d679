"""The service's counters, written in Prometheus' text format (GET /metrics). Plain Python, no
client library: a few counters and two histograms, updated on the event loop's thread (one
process: with --workers N each process counts its own requests)."""
from __future__ import annotations

import time
from bisect import bisect_left
from collections import Counter

LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
BATCH_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)


class Histogram:
    def __init__(self, buckets: tuple):
        self.buckets, self.counts, self.sum, self.count = buckets, [0] * (len(buckets) + 1), 0.0, 0

    def observe(self, value: float) -> None:
        self.counts[bisect_left(self.buckets, value)] += 1
        self.sum += value
        self.count += 1

    def lines(self, name: str, labels: str = "") -> list[str]:
        out, total = [], 0
        sep = "," if labels else ""
        for bound, count in zip(self.buckets, self.counts):
            total += count
            out.append(f'{name}_bucket{{{labels}{sep}le="{bound}"}} {total}')
        out.append(f'{name}_bucket{{{labels}{sep}le="+Inf"}} {self.count}')
        suffix = f"{{{labels}}}" if labels else ""
        out += [f"{name}_sum{suffix} {self.sum:.6f}", f"{name}_count{suffix} {self.count}"]
        return out


class Metrics:
    def __init__(self):
        self.started = time.time()
        self.requests: Counter = Counter()  # (path, status) -> count
        self.texts: Counter = Counter()  # path -> texts answered
        self.characters: Counter = Counter()  # path -> characters answered
        self.latency: dict[str, Histogram] = {}  # path -> seconds from the request to its answer
        self.batches = 0
        self.batch_texts = Histogram(BATCH_BUCKETS)
        self.batch_seconds = Histogram(LATENCY_BUCKETS)
        self.in_flight = 0

    def request(self, path: str, status: int, seconds: float, texts: int = 0, characters: int = 0) -> None:
        self.requests[(path, status)] += 1
        self.latency.setdefault(path, Histogram(LATENCY_BUCKETS)).observe(seconds)
        if status < 400 and texts:
            self.texts[path] += texts
            self.characters[path] += characters

    def batch(self, texts: int, seconds: float) -> None:
        self.batches += 1
        self.batch_texts.observe(texts)
        self.batch_seconds.observe(seconds)

    def render(self) -> str:
        lines = ["# HELP segmenter_requests_total HTTP requests answered, by path and status",
                 "# TYPE segmenter_requests_total counter"]
        lines += [f'segmenter_requests_total{{path="{p}",status="{s}"}} {n}'
                  for (p, s), n in sorted(self.requests.items())]
        lines += ["# HELP segmenter_texts_total texts segmented (or explained), by path",
                  "# TYPE segmenter_texts_total counter"]
        lines += [f'segmenter_texts_total{{path="{p}"}} {n}' for p, n in sorted(self.texts.items())]
        lines += ["# HELP segmenter_characters_total characters segmented (or explained), by path",
                  "# TYPE segmenter_characters_total counter"]
        lines += [f'segmenter_characters_total{{path="{p}"}} {n}' for p, n in sorted(self.characters.items())]
        lines += ["# HELP segmenter_request_seconds time from a request to its answer, by path",
                  "# TYPE segmenter_request_seconds histogram"]
        for path, histogram in sorted(self.latency.items()):
            lines += histogram.lines("segmenter_request_seconds", f'path="{path}"')
        lines += ["# HELP segmenter_batches_total segment calls of the batching queue",
                  "# TYPE segmenter_batches_total counter", f"segmenter_batches_total {self.batches}",
                  "# HELP segmenter_batch_texts texts of one segment call", "# TYPE segmenter_batch_texts histogram"]
        lines += self.batch_texts.lines("segmenter_batch_texts")
        lines += ["# HELP segmenter_batch_seconds time of one segment call (in its thread)",
                  "# TYPE segmenter_batch_seconds histogram"]
        lines += self.batch_seconds.lines("segmenter_batch_seconds")
        lines += ["# HELP segmenter_requests_in_flight requests being answered now",
                  "# TYPE segmenter_requests_in_flight gauge", f"segmenter_requests_in_flight {self.in_flight}",
                  "# HELP segmenter_uptime_seconds seconds since the service started",
                  "# TYPE segmenter_uptime_seconds gauge", f"segmenter_uptime_seconds {time.time() - self.started:.3f}"]
        return "\n".join(lines) + "\n"
