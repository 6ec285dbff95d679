#!/usr/bin/env bash
# Regenerates benchmarks/results/stages.md (the README's "From a boundary signal to a segmenter")
# from the benchmark JSON files in benchmarks/results/; each file's markdown twin names its command.
set -euo pipefail
cd "$(dirname "$0")/results"
python ../stages.py \
  "e5 read naively: best single head, s > 0 (seed rule)=single_head.json:segmenter:default" \
  "e5, 12 heads, unsupervised profile (co-trained, no gold)=before_selftrain.json:segmenter:default" \
  "e5, 12 heads, calibrated on 100 dev sentences=e5char_calibrated.json:segmenter:calibrated" \
  "e5, any of the 12 heads right (oracle, reads the gold)=before_selftrain.json:segmenter:oracle" \
  "self-trained 6 layers, round 1, s > 0 (v0.1's default; now accurate)=selftrained_round1.json:segmenter:default" \
  "self-trained 6 layers, round 2, s > 0=round_2.json:segmenter:default" \
  "accurate + word decoding (before the cohesive pairs and conventions)=accurate.json:segmenter:default" \
  "distilled 2 x 192 student + word decoding (the previous default)=student_words.json:segmenter:default" \
  "+ cohesive pairs, decoder re-weighted, head refined on its own words (no conventions)=pairs_conventions.json:segmenter:plain" \
  "+ conventions of numbers and suffixes=pairs_conventions.json:segmenter:default" \
  "+ 1+1 pairs, 2+2 at the default, refined again (no conventions: segmenter:plain)=names_counts.json:segmenter:plain" \
  "+ conventions of numbers, counts and names (the previous default)=names_counts.json:segmenter:default" \
  "+ four-character units, unigram word model in place of the bonus (no conventions: segmenter:plain)=unigram_numbers.json:segmenter:plain" \
  "+ conventions, Han numbers whole (the previous default)=unigram_numbers.json:segmenter:default" \
  "+ words of at most 5 characters, four-character units by the unigram model, head refined a third time (no conventions: segmenter:plain)=function_words.json:segmenter:plain" \
  "+ conventions, function words apart, percentages whole (the previous default)=function_words.json:segmenter:default" \
  "+ word table and unigram model of all the raw text (51.5 M characters, was 6.9 M), decoder re-weighted for it (no conventions: segmenter:plain)=test.json:segmenter:plain" \
  "+ conventions: the embedded default=test.json:segmenter:default" \
  "the embedded model, coarse (MSR-like)=test.json:segmenter:coarse" \
  "the embedded model, fine (UD-like)=test.json:segmenter:fine" \
  "the embedded model, calibrated on 100 dev sentences (best level or fitted profile)=test.json:segmenter:calibrated" \
  "jieba 0.42.1 (supervised dictionary), HMM on=test.json:jieba" \
  > stages.md
