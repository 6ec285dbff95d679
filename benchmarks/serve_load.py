"""Load on `segmenter serve`: N concurrent clients on loopback for a bounded time.

    python benchmarks/serve_load.py                                  # 4 clients, 20 s, PKU dev lines
    python benchmarks/serve_load.py --clients 4 --seconds 20 --texts-per-request 1 4 --markdown benchmarks/results/serve.md

Starts `segmenter serve --host 127.0.0.1 --port 0` (this checkout's) in a subprocess, sends from
--clients threads, each with its own keep-alive connection, requests of --texts-per-request lines
of --dev (spaces removed; a dev file, never a test file) in turn for --seconds, and reports
requests/s, characters/s, p50 / p99 latency and errors (any non-200 or transport error). Every
reply's words are compared with Segmenter.segment() of the same text through the Python API (the
same model, loaded here): the differing replies must be 0. The Python API's own speed on the same
lines (segment() one line at a time, segment_batch over all) is the baseline. Traffic goes to
127.0.0.1 only, and stops by itself.
"""
from __future__ import annotations

import argparse
import os
import platform
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # this checkout's segmenter, not another installed one
DEV = REPO.parent / "shared" / "corpora" / "gold" / "pku_dev.txt"


def read_lines(path: Path, count: int) -> list[str]:
    lines = []
    with open(path, encoding="utf-8") as stream:
        for line in stream:
            text = line.replace(" ", "").strip()
            if text:
                lines.append(text)
            if len(lines) == count:
                break
    return lines


def start_server(extra: list[str]) -> tuple[subprocess.Popen, str]:
    process = subprocess.Popen([sys.executable, "-m", "segmenter", "serve", "--host", "127.0.0.1", "--port", "0",
                                "-q", *extra], stderr=subprocess.PIPE, text=True, cwd=REPO)
    line = process.stderr.readline()
    found = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
    if not found:
        process.kill()
        raise SystemExit(f"the server did not start: {line}{process.stderr.read()}")
    threading.Thread(target=process.stderr.read, daemon=True).start()  # keep its log from filling the pipe
    url = f"http://127.0.0.1:{found.group(1)}"
    import httpx

    for _ in range(600):
        try:
            if httpx.get(f"{url}/health", timeout=5).status_code == 200:
                return process, url
        except httpx.TransportError:
            time.sleep(0.05)
    process.kill()
    raise SystemExit("the server did not answer /health within 30 s")


def cpu_seconds(pid: int | None = None) -> float:
    """CPU seconds (user + system) of a process so far: this one's threads, or another's (Linux /proc)."""
    if pid is None:
        import resource

        usage = resource.getrusage(resource.RUSAGE_SELF)
        return usage.ru_utime + usage.ru_stime
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return float("nan")


def server_batches(url: str) -> dict:
    """The server's segment calls so far (GET /metrics): how many, texts and seconds in all."""
    import httpx

    text = httpx.get(f"{url}/metrics", timeout=30).text

    def value(name: str) -> float:
        found = re.search(rf"^{name} ([0-9.e+]+)$", text, re.MULTILINE)
        return float(found.group(1)) if found else 0.0

    return {"batches": value("segmenter_batches_total"), "batch_texts": value("segmenter_batch_texts_sum"),
            "batch_seconds": value("segmenter_batch_seconds_sum")}


def load(url: str, lines: list[str], reference: list[list[str]], clients: int, seconds: float,
         per_request: int) -> dict:
    import httpx

    stop_at = time.perf_counter() + seconds
    results = [{"latencies": [], "chars": 0, "errors": 0, "differing": 0, "requests": 0} for _ in range(clients)]

    def client(k: int) -> None:
        mine = results[k]
        start = (k * len(lines)) // clients
        with httpx.Client(base_url=url, timeout=60) as http:
            i = start
            while time.perf_counter() < stop_at:
                picked = [(i + j) % len(lines) for j in range(per_request)]
                i += per_request
                texts = [lines[p] for p in picked]
                began = time.perf_counter()
                try:
                    answer = http.post("/segment", json={"texts": texts})
                    took = time.perf_counter() - began
                    if answer.status_code != 200:
                        mine["errors"] += 1
                        continue
                    words = answer.json()["words"]
                except (httpx.HTTPError, ValueError, KeyError):
                    mine["errors"] += 1
                    continue
                mine["latencies"].append(took)
                mine["requests"] += 1
                mine["chars"] += sum(map(len, texts))
                mine["differing"] += sum(w != reference[p] for w, p in zip(words, picked))

    began = time.perf_counter()
    threads = [threading.Thread(target=client, args=(k,)) for k in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(seconds + 120)
    elapsed = time.perf_counter() - began
    latencies = sorted(t for r in results for t in r["latencies"])

    def quantile(q: float) -> float:
        return latencies[min(len(latencies) - 1, int(q * len(latencies)))] * 1000 if latencies else float("nan")

    requests = sum(r["requests"] for r in results)
    return {"clients": clients, "per_request": per_request, "seconds": elapsed, "requests": requests,
            "requests_s": requests / elapsed, "chars_s": sum(r["chars"] for r in results) / elapsed,
            "p50_ms": quantile(0.50), "p99_ms": quantile(0.99), "errors": sum(r["errors"] for r in results),
            "differing": sum(r["differing"] for r in results)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=20.0, help="each run's length (at most 300)")
    parser.add_argument("--texts-per-request", type=int, nargs="+", default=[1, 4])
    parser.add_argument("--lines", type=int, default=2000, help="lines of --dev used (default 2000)")
    parser.add_argument("--dev", type=Path, default=DEV)
    parser.add_argument("--serve-options", default="", help="more options for `segmenter serve`, one string")
    parser.add_argument("--markdown", type=Path, default=None)
    args = parser.parse_args()
    if not 0 < args.seconds <= 300 or not 0 < args.clients <= 64:
        parser.error("--seconds must be in (0, 300] and --clients in 1..64")
    from segmenter import Segmenter

    lines = read_lines(args.dev, args.lines)
    segmenter = Segmenter(processes=False)
    began = time.perf_counter()
    reference = [segmenter.segment(text) for text in lines]
    one_by_one = sum(map(len, lines)) / (time.perf_counter() - began)
    began = time.perf_counter()
    batch = segmenter.segment_batch(lines, show_progress=False)
    batched = sum(map(len, lines)) / (time.perf_counter() - began)
    assert batch == reference, "segment_batch and segment() differ"
    del segmenter

    process, url = start_server(args.serve_options.split())
    try:
        runs, before = [], server_batches(url)
        for n in args.texts_per_request:
            cpu = cpu_seconds(process.pid), cpu_seconds()
            run = load(url, lines, reference, args.clients, args.seconds, n)
            run.update(server_cpu=cpu_seconds(process.pid) - cpu[0], client_cpu=cpu_seconds() - cpu[1])
            after = server_batches(url)
            run.update({key: after[key] - before[key] for key in after})
            runs.append(run)
            before = after
    finally:
        process.terminate()
        code = process.wait(timeout=60)
    rows = [("| clients | texts / request | requests | requests/s | characters/s | p50 ms | p99 ms | errors | "
             "replies differing from segment() | segment calls | texts / call | ms / call | time in segment calls | "
             "CPU s: server / clients |"), "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    rows += [f"| {r['clients']} | {r['per_request']} | {r['requests']} | {r['requests_s']:.1f} | {r['chars_s']:,.0f} | "
             f"{r['p50_ms']:.1f} | {r['p99_ms']:.1f} | {r['errors']} | {r['differing']} | {r['batches']:.0f} | "
             f"{r['batch_texts'] / max(r['batches'], 1):.1f} | {1000 * r['batch_seconds'] / max(r['batches'], 1):.1f} | "
             f"{r['batch_seconds'] / r['seconds']:.0%} | {r['server_cpu']:.1f} / {r['client_cpu']:.1f} |" for r in runs]
    command = "python benchmarks/serve_load.py " + " ".join(sys.argv[1:])
    text = "\n".join([
        "# `segmenter serve` under load (benchmarks/serve_load.py)", "",
        f"`{command}`", "",
        (f"{len(lines)} lines of {args.dev.name} (spaces removed), {sum(map(len, lines)):,} characters; the embedded "
        f"default model; server and clients on one machine ({os.cpu_count()} cores, {platform.machine()}, "
        f"Python {platform.python_version()}; load average {os.getloadavg()[0]:.1f} when it ended: other work "
        f"shares the cores), loopback only; each run {args.seconds:g} s. The server exited "
        f"{code} on SIGTERM."), "",
        *rows, "",
        (f"The Python API on the same lines, in this process: segment() one line at a time {one_by_one:,.0f} "
        f"characters/s, segment_batch over all of them {batched:,.0f} characters/s."), "",
        ("Every reply's words were compared with segment() of the same text; errors count non-200 answers and "
        "transport errors. The clients are threads of one Python process on the same cores as the server, so "
        "characters/s is a floor of what the service does with its cores to itself."), ""])
    print(text)
    if args.markdown:
        args.markdown.parent.mkdir(parents=True, exist_ok=True)
        args.markdown.write_text(text, encoding="utf-8")
    return 0 if all(r["errors"] == 0 and r["differing"] == 0 for r in runs) and code == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
