"""Peak memory of `segmenter FILE -o OUT` as the input grows: it should stay flat (streaming).

    python benchmarks/memory.py                      # 0, 1 and 20 MB, embedded model (or a random one)
    python benchmarks/memory.py --sizes 1 5 --model PATH --threads 1

For each size, a UTF-8 file of that many MB is made from lines drawn from the shared raw corpus
(the first 4 MB of ../shared/corpora/raw/pretrain_raw.txt; synthetic sentences without it),
then `python -m segmenter FILE -o OUT -q` runs in a child process. Its peak resident set size
comes from the kernel's accounting of that child alone (os.wait4 -> ru_maxrss, the same figure
as VmHWM), so nothing of this script is counted. Size 0 is an empty file: the command line
loads no model for empty input, so it is the cost of Python and the CLI alone.

Without the embedded model (segmenter/model/shipped/default) and without --model, a small random BERT
(2 layers, 64 wide, 256 positions, a vocabulary from the corpus) stands in: what is measured is
the streaming of the CLI, which does not depend on the weights. The report says which model ran.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpora" / "raw" / "pretrain_raw.txt"
MB = 1_000_000


def corpus_lines(corpus: Path | None, limit_bytes: int = 4 * MB) -> list[str]:
    """Up to `limit_bytes` of non-empty lines of the corpus, or synthetic Chinese sentences."""
    if corpus is not None and corpus.is_file():
        lines, size = [], 0
        with open(corpus, encoding="utf-8", errors="replace") as handle:
            for line in handle:
                line = line.rstrip("\n")
                if line:
                    lines.append(line)
                    size += len(line.encode("utf-8")) + 1
                    if size >= limit_bytes:
                        break
        if lines:
            return lines
    rng = random.Random(0)
    words = "我们 中国 人民 经济 发展 社会 主义 建设 今天 明天 北京 上海 政府 工作 报告 提高 问题 研究 科学 技术".split()
    marks = ["，", "。", "、", "；", "！", "3.5%", "2024年", "GDP"]
    return ["".join(rng.choice(words + marks) for _ in range(rng.randint(5, 40))) + "。" for _ in range(20_000)]


def write_input(path: Path, size_mb: float, lines: list[str]) -> int:
    """Write lines drawn at random (seeded) until the file has size_mb MB; return their number.

    Drawn, not cycled: every size then has the same mix of line lengths, hence of batch shapes,
    so that a difference in peak memory can only come from the size of the file.
    """
    rng = random.Random(0)
    target, size, count = int(size_mb * MB), 0, 0
    with open(path, "w", encoding="utf-8", newline="\n") as handle:
        while size < target:
            line = rng.choice(lines) + "\n"
            handle.write(line)
            size += len(line.encode("utf-8"))
            count += 1
    return count


def random_model(folder: Path, lines: list[str]) -> Path:
    """A small random BERT folder with a vocabulary of the corpus's 4000 commonest characters."""
    import torch
    from transformers import BertConfig, BertModel

    from segmenter.model.profile import HeadProfile
    from segmenter.text.vocab import CharVocab

    torch.manual_seed(0)
    vocab = CharVocab.build(Counter("".join(lines)), max_size=4000)
    config = BertConfig(
        vocab_size=len(vocab), hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
        intermediate_size=128, max_position_embeddings=256,
    )
    folder.mkdir(parents=True, exist_ok=True)
    BertModel(config, add_pooling_layer=False).save_pretrained(folder)
    vocab.save(folder)
    HeadProfile(heads=[(1, 0), (1, 1)], weights=[0.5, 0.5], source="random, for benchmarks/memory.py").save(folder)
    return folder


def measure(model: str, path: Path, out: Path, threads: int | None, batch_size: int) -> dict:
    """Run the CLI on `path`; its wall time and peak RSS (the child's own, from wait4)."""
    command = [sys.executable, "-m", "segmenter", str(path), "-o", str(out), "-q", "-m", model, "--batch-size", str(batch_size)]
    if threads:
        command += ["--threads", str(threads)]
    with tempfile.TemporaryFile() as stderr:  # a file, not a pipe: a chatty child cannot block
        started = time.perf_counter()
        child = subprocess.Popen(command, stderr=stderr)
        _, status, usage = os.wait4(child.pid, 0)
        seconds = time.perf_counter() - started
        child.returncode = os.waitstatus_to_exitcode(status)
        if child.returncode != 0:
            stderr.seek(0)
            error = stderr.read().decode("utf-8", "replace")
            raise SystemExit(f"memory.py: `{' '.join(command)}` failed ({child.returncode}):\n{error}")
    return {"seconds": round(seconds, 1), "peak_rss_mb": round(usage.ru_maxrss / 1024, 1)}  # ru_maxrss: KiB on Linux


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("--sizes", type=float, nargs="+", default=[0, 1, 20], help="input sizes in MB (default: 0 1 20)")
    parser.add_argument("--model", default=None, help="model folder (default: the embedded model, else a small random one)")
    parser.add_argument("--corpus", type=Path, default=CORPUS, help=f"lines to repeat (default: {CORPUS})")
    parser.add_argument("--threads", type=int, default=None, help="the CLI's --threads (default: all cores)")
    parser.add_argument("--batch-size", type=int, default=64, help="the CLI's --batch-size (default: 64)")
    parser.add_argument("--json", type=Path, default=None, help="also write the results here")
    args = parser.parse_args(argv)

    from segmenter.model.folders import embedded_model_path

    lines = corpus_lines(args.corpus)
    source = str(args.corpus) if args.corpus and args.corpus.is_file() else "synthetic sentences"
    with tempfile.TemporaryDirectory(prefix="segmenter-memory-") as work:
        work = Path(work)
        if args.model:
            model, model_name = args.model, args.model
        elif (embedded_model_path() / "config.json").is_file():
            model, model_name = "embedded", f"embedded ({embedded_model_path()})"
        else:
            model = str(random_model(work / "random-model", lines))
            model_name = "small random BERT (2 layers x 64, 256 positions; no embedded model here)"
        print(f"model: {model_name}\ntext: lines of {source}\n")
        print(f"{'input MB':>9} {'lines':>9} {'seconds':>8} {'peak RSS MB':>12}")
        rows = []
        for size in args.sizes:
            path = work / f"input-{size:g}MB.txt"
            count = write_input(path, size, lines)
            row = {"input_mb": size, "lines": count, **measure(model, path, work / "out.txt", args.threads, args.batch_size)}
            rows.append(row)
            print(f"{size:>9g} {count:>9} {row['seconds']:>8} {row['peak_rss_mb']:>12}", flush=True)
            path.unlink()
    if args.json:
        args.json.write_text(json.dumps({"model": model_name, "text": source, "runs": rows}, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
