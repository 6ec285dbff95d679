"""Text runs and windows: the rules that decide everything the model does not."""
import numpy as np
import pytest

from segmenter.text.runs import split_runs
from segmenter.text.windows import SENTENCE_END_RE, make_windows, sentence_windows


def kinds(text):
    return [(r.kind, text[r.start : r.end]) for r in split_runs(text)]


def test_runs_cover_text_exactly():
    text = "共同创造美好的新世纪——二○○一年新年贺词（附图片1张）https://x.cn/a?b=1 中文 a.b@c.com 3.14% MP3"
    runs = split_runs(text)
    assert "".join(text[r.start : r.end] for r in runs) == text
    assert all(a.end == b.start for a, b in zip(runs, runs[1:]))


@pytest.mark.parametrize(
    "text, expected",
    [
        ("我爱北京", [("han", "我爱北京")]),
        ("增长3.5%以上", [("han", "增长"), ("number", "3.5%"), ("han", "以上")]),
        ("１２％", [("number", "１２％")]),
        ("1,000,000元", [("number", "1,000,000"), ("han", "元")]),
        # a score, a time, a ratio, a fraction, a date: one number (every dev file that has them writes
        # them so); a range with a dash or a tilde is three words
        ("比分2-1", [("han", "比分"), ("number", "2-1")]),
        ("３∶１和１／３在10:30", [("number", "３∶１"), ("han", "和"), ("number", "１／３"), ("han", "在"), ("number", "10:30")]),
        ("2016-10-01", [("number", "2016-10-01")]),
        ("５—６级", [("number", "５"), ("punct", "—"), ("number", "６"), ("han", "级")]),
        ("25～50", [("number", "25"), ("symbol", "～"), ("number", "50")]),
        ("-5", [("punct", "-"), ("number", "5")]),
        ("用MP3听", [("han", "用"), ("latin", "MP3"), ("han", "听")]),
        ("don't", [("latin", "don't")]),
        ("见https://example.com/x。", [("han", "见"), ("url", "https://example.com/x"), ("punct", "。")]),
        # a URL stops where Han text, full-width or curly punctuation, or a trailing mark begins
        ("www.x.com.cn设定密码", [("url", "www.x.com.cn"), ("han", "设定密码")]),
        ("(见www.x.cn).", [("punct", "("), ("han", "见"), ("url", "www.x.cn"), ("punct", ")"), ("punct", ".")]),
        ("“http://a.com/b?c=1&d=2”，", [("punct", "“"), ("url", "http://a.com/b?c=1&d=2"), ("punct", "”"), ("punct", "，")]),
        ("https://x.org/wiki/A_(b)", [("url", "https://x.org/wiki/A_(b)")]),
        ("发邮件到a.b@example.org吧", [("han", "发邮件到"), ("email", "a.b@example.org"), ("han", "吧")]),
        ("二○○一年", [("han", "二○○一年")]),
        ("好——坏……", [("han", "好"), ("punct", "——"), ("han", "坏"), ("punct", "……")]),
        ("，。", [("punct", "，"), ("punct", "。")]),
        ("a  b", [("latin", "a"), ("space", "  "), ("latin", "b")]),
        ("e\u0301", [("latin", "e\u0301")]),
        ("👨\u200d👩\u200d👧", [("symbol", "👨\u200d👩\u200d👧")]),
        ("GPT-4发布", [("latin", "GPT-4"), ("han", "发布")]),
        # a name's ++ is the name's; a # is not (a hashtag's closing mark: #Plan B#)
        ("我爱C++和g++", [("han", "我爱"), ("latin", "C++"), ("han", "和"), ("latin", "g++")]),
        ("C++11标准", [("latin", "C++11"), ("han", "标准")]),
        ("VC++6.0和C++0x", [("latin", "VC++6.0"), ("han", "和"), ("latin", "C++0x")]),
        ("C++ 11", [("latin", "C++"), ("space", " "), ("number", "11")]),
        ("x++y", [("latin", "x"), ("symbol", "+"), ("symbol", "+"), ("latin", "y")]),
        ("#少女时代Girls#", [("punct", "#"), ("han", "少女时代"), ("latin", "Girls"), ("punct", "#")]),
        ("#Plan B#开箱", [("punct", "#"), ("latin", "Plan"), ("space", " "), ("latin", "B"), ("punct", "#"), ("han", "开箱")]),
        ("臺灣與香港", [("han", "臺灣與香港")]),
    ],
)
def test_run_kinds(text, expected):
    assert kinds(text) == expected


# Letters of other scripts stay together like Latin words: split at spaces and punctuation only.
@pytest.mark.parametrize(
    "script, text, expected",
    [
        ("hangul", "한국어 문장입니다.", [("alpha", "한국어"), ("space", " "), ("alpha", "문장입니다"), ("punct", ".")]),
        ("hiragana", "ひらがな", [("alpha", "ひらがな")]),
        ("katakana", "コーヒー、ｶﾀｶﾅ", [("alpha", "コーヒー"), ("punct", "、"), ("alpha", "ｶﾀｶﾅ")]),
        ("kana then Han", "ひらがな漢字", [("alpha", "ひらがな"), ("han", "漢字")]),
        ("cyrillic", "Привет, мир из-за", [("alpha", "Привет"), ("punct", ","), ("space", " "), ("alpha", "мир"), ("space", " "), ("alpha", "из-за")]),
        ("arabic with harakat", "مُحَمَّد كلمة،", [("alpha", "مُحَمَّد"), ("space", " "), ("alpha", "كلمة"), ("punct", "،")]),
        ("persian with ZWNJ", "می\u200cخواهم", [("alpha", "می\u200cخواهم")]),
        ("greek", "λόγος και", [("alpha", "λόγος"), ("space", " "), ("alpha", "και")]),
        ("hebrew with points", "עִברִית", [("alpha", "עִברִית")]),
        ("devanagari", "नमस्ते दुनिया", [("alpha", "नमस्ते"), ("space", " "), ("alpha", "दुनिया")]),
        ("in Chinese text", "他说한국어很难", [("han", "他说"), ("alpha", "한국어"), ("han", "很难")]),
    ],
)
def test_other_scripts_stay_whole(script, text, expected):
    assert kinds(text) == expected


def test_empty_text_has_no_runs():
    assert split_runs("") == []


@pytest.mark.parametrize("length, size, overlap", [(0, 5, 2), (3, 5, 2), (5, 5, 2), (10, 4, 2), (300, 254, 64), (1000, 30, 8), (31, 30, 29)])
def test_windows_keep_every_position_once(length, size, overlap):
    windows = make_windows(length, size, overlap)
    kept = [i for w in windows for i in range(w.keep_start, w.keep_end)]
    assert kept == list(range(length))
    for w in windows:
        assert 0 <= w.start <= w.keep_start <= w.keep_end <= w.end <= length
        assert w.end - w.start <= size


def test_windows_keep_away_from_cut_edges():
    # Away from the text's own ends, a kept position has at least overlap // 2 - 1
    # characters of context on each side within its window.
    for w in make_windows(1000, 50, 20)[1:-1]:
        assert w.keep_start - w.start >= 9 and w.end - w.keep_end >= 9


@pytest.mark.parametrize("size, overlap", [(0, 0), (5, 5), (5, -1)])
def test_bad_windows_rejected(size, overlap):
    with pytest.raises(ValueError):
        make_windows(10, size, overlap)


def test_sentence_windows_end_at_sentences_and_keep_every_position_once():
    sentence = "我们在北京看到了很多新的东西。"  # 15 characters
    text = sentence * 20 + "这一句很长" * 30 + "。" + "”他说！" + sentence * 3  # one sentence of 151
    breaks = [m.end() for m in SENTENCE_END_RE.finditer(text)]
    assert text[breaks[0] - 1] == "。" and text[breaks[20] - 1] == "”"  # closing quotes stay with the sentence
    windows = sentence_windows(len(text), 50, 16, breaks)
    kept = [i for w in windows for i in range(w.keep_start, w.keep_end)]
    assert kept == list(range(len(text)))
    assert all(w.end - w.start <= 50 and w.start <= w.keep_start <= w.keep_end <= w.end for w in windows)
    whole = [w for w in windows if (w.start, w.end) == (w.keep_start, w.keep_end)]
    assert all(w.end in breaks or w.end == len(text) for w in whole)
    assert [w.end - w.start for w in windows[:6]] == [45] * 6  # three whole sentences a window, no overlap
    long_one = [w for w in windows if (w.start, w.end) != (w.keep_start, w.keep_end)]
    assert long_one and all(300 <= w.start and w.end <= 452 for w in long_one)  # only the long sentence overlaps
    # no sentence end, or a text that fits: as make_windows
    assert sentence_windows(300, 50, 16, []) == make_windows(300, 50, 16)
    assert sentence_windows(40, 50, 16, [10, 20]) == make_windows(40, 50, 16)


def test_vocab_encodes_a_string_as_its_characters_one_by_one():
    """CharVocab.encode (a code point table for the Basic Multilingual Plane, a dict past it) gives
    each character the id char_id gives it: full-width folded, lower-cased where the vocabulary
    is, unknown ones [UNK], characters past the BMP and a lone surrogate included, any order."""
    from segmenter.text.vocab import SPECIAL_TOKENS, CharVocab

    vocab = CharVocab(list(SPECIAL_TOKENS) + list("中文abc1"), lowercase=True)
    text = "中Ａb文\U00020000😀x\udc80１C中\x00 \U00020000"
    expected = [vocab.char_id(char) for char in text]
    assert vocab.encode(text).tolist() == expected and vocab.encode(text).dtype == np.int64
    assert vocab.encode(text[::-1]).tolist() == expected[::-1]  # from its caches now
    assert vocab.encode("").shape == (0,) and vocab.encode("１").tolist() == [vocab.index["1"]]


def test_han_mask_by_search_and_by_comparison_agree():
    """han_mask searches the ranges' edges for a few code points and compares with each range for
    many: both give HAN_RANGES exactly, at every range's edges and on random code points."""
    from segmenter.text.runs import HAN_RANGES, SEARCH_BELOW, han_mask

    edges = np.array([x for lo, hi in HAN_RANGES for x in (lo - 1, lo, hi, hi + 1)], dtype=np.int64)
    rng = np.random.default_rng(0)
    for size in (0, 1, SEARCH_BELOW - 1, SEARCH_BELOW, 5000):
        codepoints = np.concatenate([edges, rng.integers(0, 0x110000, size)])[:size]
        expected = np.zeros(len(codepoints), dtype=bool)
        for lo, hi in HAN_RANGES:
            expected |= (codepoints >= lo) & (codepoints <= hi)
        assert np.array_equal(han_mask(codepoints), expected)
        assert han_mask(codepoints).dtype == bool
    assert han_mask(np.array([ord("中"), ord("a"), ord("〇"), 0x20000], dtype=np.uint32)).tolist() == [True, False, True, True]


def test_a_latin_word_keeps_its_combining_accents_inside():
    """Decomposed text (NFD) writes é as e + U+0301: the accent stays inside its word, as a
    precomposed é does, instead of ending it (e\u0301|te\u0301)."""
    import unicodedata

    for word in ("été", "naïve-cafés", "Ångström"):
        decomposed = unicodedata.normalize("NFD", word)
        runs = split_runs(decomposed)
        assert [(r.kind, decomposed[r.start:r.end]) for r in runs] == [("latin", decomposed)]


def test_is_among_by_table_agrees_with_the_sorted_search():
    """is_among looks code points up in a character list's table (character_table); a list with a
    character beyond the BMP has none and searches. Both give among_sorted's answer."""
    from segmenter.text.batch import among_sorted, character_table, codes_of, is_among
    from segmenter.text.runs import code_points

    codes = code_points("个了就𠀀\x00\uffff\U0010ffff中a")
    for characters in ("个就", "了就𠀀", "", "\uffff", "a\x00", "\U0010ffff"):
        assert is_among(codes, characters).tolist() == among_sorted(codes, codes_of(characters)).tolist()
    assert character_table("了就𠀀") is None
    assert not character_table("个").flags.writeable
    assert is_among(np.zeros(0, np.int64), "个").tolist() == []


def test_pieces_cut_the_joined_text_at_the_ends():
    """Texts.pieces: the text between consecutive ends, by one split at marks the text lacks, or
    by slices where it holds every mark."""
    from itertools import pairwise

    from segmenter.text.batch import _PIECE_MARKS, Texts

    for texts in (["今天天气", "不错\ud800", "a\x00b"], ["".join(_PIECE_MARKS) + "x", "yz"]):
        batch = Texts(texts, [[] for _ in texts])
        for ends in ([len(batch.text)], list(range(1, len(batch.text) + 1)), [2, 5, len(batch.text)]):
            bounds = [0, *ends, len(batch.text)]
            expected = [batch.text[a:b] for a, b in pairwise(bounds)]
            assert batch.pieces(np.array(ends, dtype=np.int64)) == expected


def test_plain_runs_of_texts_joined_are_split_runs_of_each():
    """runs.plain_runs reads a batch of plain texts without whitespace at once (Han runs and
    characters of a run of their own by their class, only the other stretches by the run regex):
    the runs split_runs finds in each, URLs, e-mail addresses, numbers and marks of the plain
    characters in any order among them."""
    import random
    import re

    from segmenter.text.runs import _PLAIN_CLASS, PLAIN_KINDS, is_plain_spaceless, plain_runs

    others = re.findall(rf"(?![\u3400-\u9fff])[{_PLAIN_CLASS}]", "".join(map(chr, range(0x10000))))
    pieces = ([c for c in others if not c.isspace()] + list("中国人民〇○𠀀天") * 40
              + ["http://", "www.", "a@b.cn", "C++", "3.14", "１２％", "——", "……", "2,000", "1/8", "ab'c"] * 8)
    rng = random.Random(3)
    for _ in range(3000):
        texts = ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 12))) for _ in range(rng.randint(1, 4))]
        assert all(map(is_plain_spaceless, texts))
        lengths = np.array([len(t) for t in texts], dtype=np.int64)
        starts, ends, kinds = plain_runs("".join(texts), np.cumsum(lengths) - lengths)
        expected = [(r.kind, r.start + offset, r.end + offset)
                    for text, offset in zip(texts, (np.cumsum(lengths) - lengths).tolist())
                    for r in split_runs(text, plain=False)]
        assert list(zip(map(PLAIN_KINDS.__getitem__, kinds.tolist()), starts.tolist(), ends.tolist())) == expected


def test_plain_texts_split_as_any_text():
    """A plain text (runs.is_plain: no mark or joiner that a run would take past its match) is
    split by the run regex alone: the runs of the general path, whatever its plain characters."""
    import random
    import re

    from segmenter.text.runs import _PLAIN_CLASS, is_plain

    others = re.findall(rf"(?![\u3400-\u9fff])[{_PLAIN_CLASS}]", "".join(map(chr, range(0x10000))))
    pieces = others + list("中国人民〇𠀀天 \n") * 30 + ["http://", "www.", "a@b.cn", "C++", "１２％", "——"] * 5
    rng = random.Random(5)
    for _ in range(3000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 15)))
        assert is_plain(text) and split_runs(text, plain=True) == split_runs(text, plain=False)


def test_plans_of_a_batch_are_those_of_each_text():
    """plan.plan_texts builds the plans of plain texts without spaces together: the runs,
    positions and junctions of TextPlan(text), for the others too (a batch of them alone, and
    one where every text is plain)."""
    from segmenter.text.plan import TOGETHER_FROM, TextPlan, plan_texts
    from segmenter.text.runs import is_plain_spaceless

    texts = ["我爱北京天安门", "", "中国", "a b 中国人", "中\u0301国人", "🇨🇳中国人民", "１９９７年℃①●", "x", "中",
             "www.x.cn设定密码", "他说：“好！”——是的……", "\u3000中国", "𠀀𠀁中", "二○○一年"]
    texts = texts * (TOGETHER_FROM // len("".join(texts)) + 1)  # enough characters to be planned together
    for batch in (texts, [text for text in texts if is_plain_spaceless(text)] * 2):
        assert len("".join(batch)) >= TOGETHER_FROM
        for plan, text in zip(plan_texts(batch), batch):
            alone = TextPlan(text)
            assert (plan.text, plan.runs, plan.scores) == (alone.text, alone.runs, None)
            assert all(type(run) is type(other) for run, other in zip(plan.runs, alone.runs))
            for name in ("positions", "junctions"):
                assert getattr(plan, name).dtype == np.int64
                assert getattr(plan, name).tolist() == getattr(alone, name).tolist()


def test_with_and_without_ends_of_a_few_are_the_numpy_answers(monkeypatch):
    """with_ends / without_ends change a sentence's few ends in Python (FEW_ENDS): the sorted
    union and difference that their numpy searches give, from lists and arrays alike, and what
    those give an end that is there twice."""
    import random

    from segmenter.text import batch
    from segmenter.text.batch import with_ends, without_ends

    rng = random.Random(11)
    for _ in range(500):
        ends = sorted(rng.sample(range(1, 90), rng.randint(0, 30)))
        ends = np.array(ends + ends[-1:] * rng.randint(0, 2), dtype=np.int64)  # a last end twice, as a rule may get it
        other = [rng.randint(0, 95) for _ in range(rng.randint(0, 8))]  # repeats, and ends already there
        for change in (other, np.array(other, dtype=np.int64)):
            few = with_ends(ends, change), without_ends(ends, change)
            with monkeypatch.context() as patch:
                patch.setattr(batch, "FEW_ENDS", -1)
                assert all(a.dtype == b.dtype == np.int64 and a.tolist() == b.tolist()
                           for a, b in zip(few, (with_ends(ends, change), without_ends(ends, change))))
            if len(set(ends.tolist())) == len(ends):  # sorted unique ends: the union and the difference
                assert few[0].tolist() == sorted(set(ends.tolist()) | set(other))
                assert few[1].tolist() == sorted(set(ends.tolist()) - set(other))
