#!/usr/bin/env bash
# Regenerates benchmarks/results/stages.md ("From a boundary signal to a segmenter" in docs/benchmarks.md)
# from the benchmark JSON files in benchmarks/results/ (the current run) and benchmarks/results/history/
# (earlier stops); each file's markdown twin names its command (benchmarks/results/README.md lists them).
set -euo pipefail
cd "$(dirname "$0")/results"
python ../stages.py \
  "e5 read naively: best single head, s > 0 (seed rule)=history/single_head.json:segmenter:default" \
  "e5, 12 heads, unsupervised profile (co-trained, no gold)=history/before_selftrain.json:segmenter:default" \
  "e5, 12 heads, calibrated on 100 dev sentences=history/e5char_calibrated.json:segmenter:calibrated" \
  "e5, any of the 12 heads right (oracle, reads the gold)=history/before_selftrain.json:segmenter:oracle" \
  "self-trained 6 layers, round 1, s > 0 (v0.1's default; now accurate)=history/selftrained_round1.json:segmenter:default" \
  "self-trained 6 layers, round 2, s > 0=history/round_2.json:segmenter:default" \
  "accurate + word decoding (before the cohesive pairs and conventions)=history/accurate.json:segmenter:default" \
  "distilled 2 x 192 student + word decoding (the previous default)=history/student_words.json:segmenter:default" \
  "+ cohesive pairs, decoder re-weighted, head refined on its own words (no conventions)=history/pairs_conventions.json:segmenter:plain" \
  "+ conventions of numbers and suffixes=history/pairs_conventions.json:segmenter:default" \
  "+ 1+1 pairs, 2+2 at the default, refined again (no conventions: segmenter:plain)=history/names_counts.json:segmenter:plain" \
  "+ conventions of numbers, counts and names (the previous default)=history/names_counts.json:segmenter:default" \
  "+ four-character units, unigram word model in place of the bonus (no conventions: segmenter:plain)=history/unigram_numbers.json:segmenter:plain" \
  "+ conventions, Han numbers whole (the previous default)=history/unigram_numbers.json:segmenter:default" \
  "+ words of at most 5 characters, four-character units by the unigram model, head refined a third time (no conventions: segmenter:plain)=history/function_words.json:segmenter:plain" \
  "+ conventions, function words apart, percentages whole (the previous default)=history/function_words.json:segmenter:default" \
  "+ word table and unigram model of all the raw text (51.5 M characters, was 6.9 M), decoder re-weighted for it (no conventions: segmenter:plain)=history/word_table.json:segmenter:plain" \
  "+ conventions, PKU's (the previous default)=history/word_table.json:segmenter:default" \
  "the general standard: names whole, every suffix, 2+1 pairs by the unigram model (the previous default)=history/standards.json:segmenter:default" \
  "+ long words the raw text never breaks joined (中华人民共和国); rules as one table, run over a batch (the previous default)=history/long_words.json:segmenter:default" \
  "feed-forward layers shrunk to 384 of 768 neurons, trained on its own scores (the previous default)=history/shrunk.json:segmenter:default" \
  "+ windows of whole sentences, no overlap at a sentence end (the previous default)=history/float_graph.json:segmenter:default" \
  "+ static int8 graph, activation scales from 800 raw lines (the previous default)=history/static_qlinear.json:segmenter:default" \
  "+ int8 products scaled straight to float with their bias, MatMulIntegerToFloat (the previous default)=history/products_float.json:segmenter:default" \
  "+ the raw text's rare words in the word table: 166 k strings seen 5-9 times (画蛇添足) (the previous default)=history/rare_strings.json:segmenter:default" \
  "+ rare four-character units (塞翁失马), head refined a fourth time, on the general standard's words (the previous default)=history/round4.json:segmenter:default" \
  "+ a line's list number takes its period (1. １．), an ASCII-digit number its 万 or 亿 (30万) (the previous default)=history/list_numbers.json:segmenter:default" \
  "+ a verb's 着 apart (看 着), 第 with its digits (第6), a score or ratio one number (2-1, ３∶１) (the previous default)=history/verb_zhe.json:segmenter:default" \
  "+ a three-character word led or ended by a function word apart (不 需要, 生活 中) (the previous default)=history/function_triples.json:segmenter:default" \
  "+ a word the decoder's joins made may join again (共和 国 -> 共和国: 中华人民共和国 at the fine level too) (the previous default)=history/joins_second_pass.json:segmenter:default" \
  "+ a four- or five-character word of two words the raw text mostly finds apart split (高等 法院, 联合国 大会) (the previous default)=history/split_compounds.json:segmenter:default" \
  "+ head refined a fifth time, only where the pku, msr and ud standards' words cut as the general standard's do (the previous default)=history/round5.json:segmenter:default" \
  "+ function words: kept whole (为了 除了 可是), joined where the heads cut inside them (你好 为什么 有的), a verb and its pronoun apart (说 你) (the previous default: 2 x 192)=history/default_2x192.json:segmenter:default" \
  "distilled again, 2 x 96 (half as wide), from that model on 16 M raw characters; its pipeline unchanged (the previous default)=history/default_2x96.json:segmenter:default" \
  "distilled again, 2 x 64, from the same model and labels, 9 passes over them instead of 3 (the previous default)=history/default_2x64ffn256.json:segmenter:default" \
  "feed-forward 128 instead of 256, the best dev mean of three training seeds, same labels (the previous default: 8-bit int8 weights, run on a CPU with VNNI)=history/default_ffn128_8bit.json:segmenter:default" \
  "the same weights exported with 7-bit int8 weights, which no CPU's kernel saturates (the embedded default)=test.json:segmenter:default" \
  "the shipped fast student (2 x 48, distilled from the same 2 x 192 model on the same 16 M raw characters, 9 passes)=test.json:segmenter:fast" \
  "the embedded model, standard pku (ASCII-digit numbers take their unit: 1997年)=test.json:segmenter:pku" \
  "the embedded model, standard msr (a number in digits with its measure word: ２０６个)=test.json:segmenter:msr" \
  "the embedded model, standard ud (a verb and its 为 or 于 apart: 成 为)=test.json:segmenter:ud" \
  "the embedded model, calibrated on 100 dev sentences (best standard or fitted profile)=test.json:segmenter:calibrated" \
  "jieba 0.42.1 (supervised dictionary), HMM on=test.json:jieba" \
  > stages.md
