"""Conventions of words (the rows of rules.TABLE in word_rules.py, run by
conventions.apply_conventions): a verb and its coverb, a name after its surname, function words
and particles, three-character words, compounds of two free words, the words MSR keeps whole,
runs of marks. Most read the shipped model's word table (raw-text counts, unigram model)."""
from dataclasses import replace

import numpy as np
import pytest

from segmenter import Conventions, Segmenter
from segmenter.words.assembly import split_words
from segmenter.standards.conventions import apply_conventions
from segmenter.standards.levels import STANDARDS
from segmenter.text.runs import split_runs
from segmenter.train.ngram_counting import build_word_table

from test_conventions import words_after


def pairs_of(text: str) -> list[str]:
    """A text cut into two-character words: 看着带着 -> 看着 带着."""
    return [text[i : i + 2] for i in range(0, len(text), 2)]


def test_a_verb_and_its_coverb_split_at_ud():
    words = ["北京", "位于", "华北", "，", "成为", "首都", "，", "因为", "由于", "认为", "，", "为", "于是"]
    text = "".join(words)
    ud = STANDARDS["ud"].rules
    assert words_after(text, words, ud) == ["北京", "位", "于", "华北", "，", "成", "为", "首都", "，", "因为", "由于",
                                            "认为", "，", "为", "于是"]
    for name in ("general", "pku", "msr"):  # their files write 成为 位于 whole
        assert words_after(text, words, STANDARDS[name].rules)[1] == "位于"
    assert words_after(text, words, ud, conventions=Conventions(coverbs=""))[1] == "位于"
    assert words_after(text, words, ud, conventions=Conventions(coverb_keeps=""))[9:11] == ["因", "为"]
    with pytest.raises(ValueError, match="coverb_keeps must be two-character pairs"):
        words_after(text, words, ud, conventions=Conventions(coverb_keeps="因为由"))


def test_a_name_splits_after_its_surname_at_the_default_and_finer():
    text = "江泽民和莫斯科的金融业"
    words = ["江泽民", "和", "莫斯科", "的", "金融业"]
    # a transliteration (斯, 科) and a suffix word (业) are not names
    assert words_after(text, words) == ["江", "泽民", "和", "莫斯科", "的", "金融业"]
    assert words_after(text, words, granularity=0.0)[:2] == ["江", "泽民"]
    assert words_after(text, words, granularity=1.0) == words  # MSR-like: names stay whole
    assert words_after(text, words, conventions=Conventions(surnames="")) == words
    # with a word table, the first two characters must occur mostly inside the word: 高速 is a
    # word of its own in this raw text (高速度 stays whole), 江泽 occurs only in 江泽民
    table = build_word_table(["高速公路", "高速发展", "高速列车", "高速度", "江泽民说"] * 3, max_n=4, min_count=1)
    text = "江泽民高速度"
    ends = apply_conventions(text, split_runs(text), np.array([3, 6]), Conventions(), 0.5, table)
    assert split_words(text, ends) == ["江", "泽民", "高速度"]


@pytest.mark.slow
def test_function_words_and_particles_split_unless_the_model_has_the_pair_as_a_word():
    # the shipped table's unigram model has 已经 他们 觉得 as words, 已有 就是 有着 as two
    table = Segmenter().word_table
    text = "已经已有他们就是有着觉得"
    given = pairs_of(text)
    for granularity in (0.0, 0.5, 1.0):  # every level
        assert words_after(text, given, granularity, Conventions(), table) == [
            "已经", "已", "有", "他们", "就", "是", "有", "着", "觉得"]
    # the threshold decides: a high one splits the words too; the rule off keeps the heads' words
    strict = words_after(text, given, 0.5, Conventions(function_pair_logp=100.0), table)
    assert strict == list(text)  # each word is led by a function word (已 他 就) or ends in a particle (着 得)
    off = Conventions(function_words="", particles="", verb_particles="")
    assert words_after(text, given, 0.5, off, table) == given  # the pairs as given
    # without a unigram model nothing tells 已经 from 已有: the rule does not run
    bare = build_word_table(["已经已有他们就是有着觉得"] * 3, max_n=3, min_count=1)
    assert words_after(text, given, 0.5, Conventions(), bare) == given
    with pytest.raises(ValueError, match="function_pair_logp"):
        Conventions(function_pair_logp=float("nan"))


@pytest.mark.slow
def test_a_verbs_zhe_splits_up_to_its_own_threshold():
    # the shipped unigram model: 看着 e**6.8 and 带着 e**7.4 likelier as one word than as two (above
    # function_pair_logp, 6.5), 接着 e**8.3 and 随着 e**9.4 (above verb_particle_logp, 8)
    table = Segmenter().word_table
    text = "看着带着接着随着"

    def words(conventions):
        return words_after(text, pairs_of(text), 0.5, conventions, table)

    assert words(Conventions()) == ["看", "着", "带", "着", "接着", "随着"]
    assert words(Conventions(verb_particles="")) == ["看着", "带着", "接着", "随着"]  # the particles' threshold alone
    assert words(Conventions(verb_particle_logp=9.0)) == ["看", "着", "带", "着", "接", "着", "随着"]
    assert words(Conventions(verb_particles="", particles="")) == ["看着", "带着", "接着", "随着"]
    with pytest.raises(ValueError, match="verb_particle_logp"):
        Conventions(verb_particle_logp=float("inf"))


def test_a_three_character_word_led_by_a_function_word_splits_after_it():
    # the shipped unigram model: 不需要 e**4.8 and 应注意 e**6.2 likelier whole than as 1|2 (up to
    # function_triple_logp, 10: split), 不得不 e**11.7 and 不锈钢 e**16.4 (stay)
    table = Segmenter().word_table
    text = "不需要应注意不得不不锈钢"

    def words(conventions, granularity=0.5):
        return words_after(text, ["不需要", "应注意", "不得不", "不锈钢"], granularity, conventions, table)

    assert words(Conventions()) == ["不", "需要", "应", "注意", "不得不", "不锈钢"]
    assert words(Conventions(function_triple_logp=5.0)) == ["不", "需要", "应注意", "不得不", "不锈钢"]
    assert words(Conventions(function_words="")) == ["不需要", "应注意", "不得不", "不锈钢"]
    assert words(Conventions(), STANDARDS["msr"].rules) == ["不需要", "应", "注意", "不得不", "不锈钢"]  # MSR: 不 leads whole


def test_a_three_character_word_ended_by_a_function_character_splits_before_it():
    # the shipped unigram model: 生活中 e**3.8 and 尤其是 e**6.8 likelier whole than as 2|1 (split),
    # 为什么 e**12.8 (stays); 地 is no function end (目的地)
    table = Segmenter().word_table
    text = "生活中尤其是为什么目的地"

    def words(conventions):
        return words_after(text, ["生活中", "尤其是", "为什么", "目的地"], 0.5, conventions, table)

    assert words(Conventions()) == ["生活", "中", "尤其", "是", "为什么", "目的地"]
    assert words(Conventions(function_ends="")) == ["生活中", "尤其是", "为什么", "目的地"]
    assert words(Conventions(function_triple_logp=5.0)) == ["生活", "中", "尤其是", "为什么", "目的地"]
    assert words(Conventions(function_ends="是中地"))[-2:] == ["目的", "地"]


@pytest.mark.slow
def test_a_compound_of_two_free_words_splits_in_two():
    # the shipped table: 高等法院 is 2.4% of 高等's occurrences and 0.4% of 法院's (split); 联合国大会
    # splits 3+2, its larger share 4.5% (2+3: 98% of 国大会's); 画蛇 is inside 画蛇添足 73% of the
    # time, 迄今 inside 迄今为止 43%, 危机 inside 金融危机 18% (stay); 第九十五 is a number's,
    # 巴西利亚 a transliteration's (stay); 最好看吧 is no word of the table (stays)
    table = Segmenter().word_table
    given = ["高等法院", "联合国大会", "画蛇添足", "迄今为止", "金融危机", "第九十五", "巴西利亚", "最好看吧", "ABCD"]
    text = "".join(given)

    def words(conventions, rules=None):
        return words_after(text, given, rules or 0.5, conventions, table)

    kept = ["画蛇添足", "迄今为止", "金融危机", "第九十五", "巴西利亚", "最好看吧", "ABCD"]
    assert words(Conventions()) == ["高等", "法院", "联合国", "大会", *kept]
    for name in ("general", "pku", "msr", "ud"):  # every standard
        assert words(Conventions(), STANDARDS[name].rules) == ["高等", "法院", "联合国", "大会", *kept]
    assert words(Conventions(compound_share=0.2))[5:8] == ["迄今为止", "金融", "危机"]  # the share decides
    assert words(Conventions(foreign=""))[-4:-2] == ["巴西", "利亚"]  # the transliteration list keeps it
    assert words(Conventions(compound_share=0.0)) == given  # 0: off
    assert words(Conventions(), replace(STANDARDS["general"].rules, split_compounds=False)) == given
    with pytest.raises(ValueError, match="compound_share"):
        Conventions(compound_share=float("nan"))


@pytest.mark.slow
def test_msr_keeps_whole_the_function_words_it_writes_whole():
    table = Segmenter().word_table
    text = "不是也是都是就是已有"

    def words(conventions, name, here=text):
        return words_after(here, pairs_of(here), STANDARDS[name].rules, conventions, table)

    general, msr = (words(Conventions(), name) for name in ("general", "msr"))
    assert general == list("不是也是都是就是已有")
    # 里 么 end words of a demonstrative: 这|是 splits, 这里 这么 stay
    assert words(Conventions(), "general", "这里这么这是") == ["这里", "这么", "这", "是"]
    assert msr == ["不是", "也是", "都是", "就", "是", "已", "有"]  # "coarse": 不 leads, 也是 都是 pairs
    assert words(Conventions(coarse_leads="", coarse_pairs=""), "msr") == general
    with pytest.raises(ValueError, match="coarse_pairs"):
        words(Conventions(coarse_pairs="也是都"), "msr")


@pytest.mark.slow
def test_words_of_their_own_led_by_a_function_word_stay_whole_at_every_standard():
    """为了 除了 可是 不再 可爱: keep_pairs, which the unigram model rates no likelier than a phrase
    (both characters are frequent words), stay whole; 就是 beside them still splits (general)."""
    table = Segmenter().word_table
    text = "为了除了可是不再可爱就是"

    def words(conventions, name="general"):
        return words_after(text, pairs_of(text), STANDARDS[name].rules, conventions, table)

    for name in ("general", "pku", "msr", "ud"):
        assert words(Conventions(), name)[:5] == ["为了", "除了", "可是", "不再", "可爱"], name
    assert words(Conventions())[5:] == ["就", "是"]
    assert words(Conventions(keep_pairs="")) == list(text)  # without the list the rule splits them all
    with pytest.raises(ValueError, match="keep_pairs"):
        words(Conventions(keep_pairs="为了除"))


@pytest.mark.slow
def test_a_verb_and_the_pronoun_after_it_split_but_words_ending_in_one_stay():
    """object_pronouns: 说你 叫他 split (a verb and its object); 其他 stays (the unigram model has it
    far likelier whole), 自我 and 迷你 stay (keep_pairs)."""
    table = Segmenter().word_table
    text = "说你叫他其他自我迷你"

    def words(conventions):
        return words_after(text, pairs_of(text), STANDARDS["general"].rules, conventions, table)

    assert words(Conventions()) == ["说", "你", "叫", "他", "其他", "自我", "迷你"]
    assert words(Conventions(object_pronouns="")) == ["说你", "叫他", "其他", "自我", "迷你"]


def test_function_words_left_in_pieces_join_where_the_pieces_are_whole_words():
    """joined_words: 你|好 and 为|什么 join; the 有的 of 所有|的 does not (有 is inside 所有: the
    pieces must be whole words); the list decides; off: the decoder's words as they were."""
    text = "你好为什么所有的有的"
    given = ["你", "好", "为", "什么", "所有", "的", "有", "的"]

    def words(conventions, rules=STANDARDS["general"].rules):
        return words_after(text, given, rules, conventions)
    for name in ("general", "pku", "msr", "ud"):
        assert words(Conventions(), STANDARDS[name].rules) == ["你好", "为什么", "所有", "的", "有的"], name
    assert words(Conventions(joined_words="")) == given
    assert words(Conventions(joined_words="为什么")) == ["你", "好", "为什么", *given[4:]]
    assert words(Conventions(), replace(STANDARDS["general"].rules, join_function_words=False)) == given


@pytest.mark.slow
def test_the_shipped_default_splits_function_words():
    seg = Segmenter()
    words = seg.segment("他已经来了，这就是我们已有的。")
    assert "已经" in words and "就是" not in words and "已有" not in words
    assert "就是" in Segmenter(conventions=None).segment("他已经来了，这就是我们已有的。")


def test_dash_and_dot_runs_split_only_coarser_than_default():
    text = "好——是……"
    words = ["好", "——", "是", "……"]
    assert words_after(text, words) == words  # PKU-like
    assert words_after(text, words, granularity=1.0) == ["好", "—", "—", "是", "…", "…"]  # MSR-like
