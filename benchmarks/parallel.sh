#!/usr/bin/env bash
# chars/s of `segmenter FILE --workers 1`, `--workers 2` and the Ray local pipeline on the same
# file, timed end to end (start-up and model loading included), and a check that the three
# outputs are byte-identical.
#
#   bash benchmarks/parallel.sh [CHARS] [MODEL]     # default: 50000 characters, the embedded model
# (`python` is the one segmenter is installed in: activate its environment first)
#
# The input is the first CHARS characters (whole lines) of ../shared/corpora/raw/pretrain_raw.txt.
set -euo pipefail
chars=${1:-50000}
model=${2:+--model $2}
raw=../shared/corpora/raw/pretrain_raw.txt
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

python - "$raw" "$chars" "$work/in.txt" <<'EOF'
import sys
raw, limit, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
n = 0
with open(raw, encoding="utf-8") as source, open(out, "w", encoding="utf-8") as target:
    for line in source:
        target.write(line)
        n += len(line.rstrip("\n"))
        if n >= limit:
            break
print(f"input: {n:,} characters of {raw}")
EOF
n=$(python -c "import sys; print(sum(len(l.rstrip('\n')) for l in open(sys.argv[1], encoding='utf-8')))" "$work/in.txt")

timed() {  # timed LABEL COMMAND...: run it, print chars/s
    local label=$1; shift
    local start end
    start=$(date +%s.%N)
    "$@"
    end=$(date +%s.%N)
    python -c "import sys; n, s = int(sys.argv[2]), float(sys.argv[3]); print(f'{sys.argv[1]}: {n / s:,.0f} chars/s ({s:.1f} s)')" \
        "$label" "$n" "$(python -c "print($end - $start)")"
}

# shellcheck disable=SC2086  # $model is empty or two words
timed "--workers 1" python -m segmenter "$work/in.txt" -o "$work/w1.txt" --workers 1 -q $model
timed "--workers 2" python -m segmenter "$work/in.txt" -o "$work/w2.txt" --workers 2 -q $model
timed "ray, local (2 actors x 0.5 CPU)" python -m segmenter ray "$work/in.txt" "$work/ray" --local-cpus 2 --actors 2 \
    --cpus-per-actor 0.5 -q $model 2>/dev/null
cmp "$work/w1.txt" "$work/w2.txt" && cmp "$work/w1.txt" "$work/ray/in.txt" && echo "outputs: byte-identical"
