"""Where one thread's time goes: a Segmenter's stages timed on the benchmark's input (issue 57).

The first N sentences of a gold file (spaces removed) are segmented as benchmarks/run.py times
them, in calls of ~16 k characters (bench.measure.timed_chunks) on one thread, and each stage's
process time is summed over a pass by wrapping the function that does it:

    plan          text -> runs and junctions (plan.plan_texts)
    graph         the encoder's runs (onnxruntime's InferenceSession.run)
    windows       the rest of reading the scores: windows, batches, gathering (read_junction_scores)
    lookups       the decoder's word-table reads of every string of its runs (autonomy_and_logp)
    decoder       the rest of the cut decisions: Viterbi, joins (decide_cuts)
    words         conventions, words and tokens (words_from_cuts)
    other         what segment_batch spends outside those (checks, chunking, the call itself)

jieba (HMM on) segments the same sentences in the same run, one per call, passes alternating with
segmenter's; the table gives each stage's best pass (of --repeats) and its share, and jieba's
best pass beside them. A stage's share is what it costs today, not what removing it would save.

    python benchmarks/time_stages.py --gold ../shared/corpora/gold/pku_test.txt --limit 1000
"""
from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

STAGES = ("plan", "graph", "windows", "lookups", "decoder", "words", "other")


class StageClock:
    """Process time spent inside wrapped functions, by stage; a stage's time excludes the stages
    it calls (graph inside windows, lookups inside decoder), so the stages add up to the pass."""

    def __init__(self):
        self.spent = defaultdict(float)
        self.stack: list[list] = []  # [stage, start, time spent in inner stages]

    def wrap(self, stage: str, function):
        def timed(*args, **kwargs):
            self.stack.append([stage, time.process_time(), 0.0])
            try:
                return function(*args, **kwargs)
            finally:
                name, start, inner = self.stack.pop()
                elapsed = time.process_time() - start
                self.spent[name] += elapsed - inner
                if self.stack:
                    self.stack[-1][2] += elapsed
        return timed


def instrument(segmenter, clock: StageClock) -> None:
    """Wrap the functions of each stage, where segment_batch's one-thread path calls them."""
    import segmenter.api as api
    import segmenter.text.plan as plan
    import segmenter.words.assembly as assembly

    plan.plan_texts = clock.wrap("plan", plan.plan_texts)  # score_texts calls it by this module's name
    plan.read_junction_scores = clock.wrap("windows", plan.read_junction_scores)
    api._score_texts = clock.wrap("other", api._score_texts)  # the call around the two above
    assembly.decide_cuts = clock.wrap("decoder", assembly.decide_cuts)
    assembly.words_from_cuts = clock.wrap("words", assembly.words_from_cuts)
    table = segmenter.word_table
    table.autonomy_and_logp = clock.wrap("lookups", table.autonomy_and_logp)
    session = segmenter.reader.session

    class TimedSession:  # InferenceSession's attributes are read-only: a stand-in that forwards
        run = staticmethod(clock.wrap("graph", session.run))

        def __getattr__(self, name):
            return getattr(session, name)

    segmenter.reader.session = TimedSession()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gold", type=Path, default=ROOT.parent / "shared" / "corpora" / "gold" / "pku_test.txt")
    parser.add_argument("--limit", type=int, default=1000, help="first N sentences (default: 1000)")
    parser.add_argument("--model", default=None, help="model folder or shipped name (default: the embedded model)")
    parser.add_argument("--repeats", type=int, default=7, help="timed passes of each (default: 7)")
    parser.add_argument("--markdown", type=Path, default=None, help="also write the table here, with the command")
    args = parser.parse_args()

    import jieba

    from segmenter.api import Segmenter
    from segmenter.bench.measure import timed_chunks

    gold = [line for line in args.gold.read_text(encoding="utf-8").splitlines() if line.strip()][: args.limit]
    texts = ["".join(line.split()) for line in gold]
    chunks = timed_chunks(texts)
    segmenter = Segmenter(args.model, num_threads=1)
    jieba.setLogLevel(60)
    jieba.initialize()
    clock = StageClock()
    instrument(segmenter, clock)
    segment = clock.wrap("other", segmenter.segment_batch)
    passes, jieba_passes = [], []
    for repeat in range(args.repeats + 1):  # the first pass of each warms up and is not counted
        clock.spent.clear()
        for chunk in chunks:
            segment(chunk)
        start = time.process_time()
        for text in texts:
            jieba.lcut(text)
        if repeat:
            passes.append(dict(clock.spent))
            jieba_passes.append(time.process_time() - start)
    best = min(passes, key=lambda spent: sum(spent.values()))
    total = sum(best.values())
    chars = sum(map(len, texts))
    lines = [f"{args.gold.name}, first {len(texts)} sentences ({chars:,} characters) in {len(chunks)} calls, "
             f"one thread; model {args.model or 'default'}; best of {args.repeats} passes", "",
             "| stage | ms | share |", "|---|--:|--:|"]
    lines += [f"| {stage} | {1000 * best.get(stage, 0.0):.1f} | {best.get(stage, 0.0) / total:.0%} |" for stage in STAGES]
    lines += [f"| **segmenter, all** | **{1000 * total:.1f}** | 100% |",
              f"| jieba (HMM on), one sentence a call | {1000 * min(jieba_passes):.1f} | |", "",
              f"segmenter's time over jieba's: {total / min(jieba_passes):.2f}"]
    print("\n".join(lines))
    if args.markdown:
        import shlex

        from segmenter.bench.report import host_info, machine_line

        command = shlex.join(["python", "benchmarks/time_stages.py", *sys.argv[1:]])
        # the machine line ends with the commit ("-dirty": a model or code not committed yet)
        header = ["# Where one thread's time goes\n", f"Command: `{command}`. Machine: "
                  f"{machine_line(host_info(('segmenter', 'jieba')))}. Stages as the script's docstring defines "
                  "them; process time of each stage's own work, best pass.\n"]
        args.markdown.write_text("\n".join(header + lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
