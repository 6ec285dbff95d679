"""The rule table (rules.TABLE, read from rules.toml) is the single source of every rule: a
standard's switches, the conventions' character lists and thresholds, the order they run in and
what calibrate tries all come from its rows."""
import pickle
from dataclasses import fields, replace

import numpy as np
import pytest

from segmenter.words.assembly import split_words
from segmenter.standards.conventions import Conventions, apply_conventions
from segmenter.words.decoding import WordDecoding
from segmenter.standards.levels import STANDARDS, Level, Rules, Standard, standard_named
from segmenter.model.profile import HeadProfile
from segmenter.standards.rules import STANDARD_NAMES, TABLE
from segmenter.text.runs import split_runs
from segmenter.train.calibrate_standard import rule_options

PROFILE = HeadProfile(heads=[(0, 0)], weights=[1.0], thresholds=(-1.0, 0.0, 1.0))
# the words the decoder might give, before the conventions
WORDS = ["江泽民", "在", "１９９７", "年", "１２", "月", "到", "上海", "市", "见", "两个", "人", "——", "新华", "社"]
TEXT = "".join(WORDS)


def words(rules, table=TABLE, conventions=Conventions()) -> list[str]:
    ends = np.cumsum([len(w) for w in WORDS])
    return split_words(TEXT, apply_conventions(TEXT, split_runs(TEXT), ends, conventions, rules, table=table))


def without(*names: str) -> tuple:
    assert set(names) <= {row.name for row in TABLE}
    return tuple(row for row in TABLE if row.name not in names)


def test_switches_and_parameters_are_the_rows():
    assert [f.name for f in fields(Rules)] == [row.name for row in TABLE]
    assert [f.name for f in fields(Conventions)] == [name for row in TABLE for name in (row.params or {})]
    assert len({row.name for row in TABLE}) == len(TABLE)
    for name, standard in STANDARDS.items():  # a named standard is each row's setting for it
        assert standard.rules == Rules(**{row.name: row.at[name] for row in TABLE})
        assert set(standard.to_dict()["rules"]) == {row.name for row in TABLE}
    assert tuple(STANDARDS) == STANDARD_NAMES and all(set(row.at) == set(STANDARD_NAMES) for row in TABLE)
    assert Conventions().name_share == 0.5 and Conventions().function_pair_logp == 6.5  # thresholds are params


def test_each_standard_writes_the_sentence_its_way():
    assert words(STANDARDS["pku"].rules) == ["江", "泽民", "在", "１９９７年", "１２月", "到", "上海市", "见",
                                             "两", "个", "人", "——", "新华社"]
    assert words(STANDARDS["msr"].rules) == ["江泽民", "在", "１９９７年１２月", "到", "上海市", "见", "两个", "人",
                                             "—", "—", "新华社"]
    assert words(STANDARDS["ud"].rules) == ["江", "泽民", "在", "１９９７年", "１２月", "到", "上海", "市", "见",
                                            "两", "个", "人", "——", "新华", "社"]


def test_removing_a_row_turns_its_rule_off():
    msr = STANDARDS["msr"].rules
    assert "江" in words(STANDARDS["pku"].rules) and "江泽民" in words(STANDARDS["pku"].rules, without("split_surnames"))
    assert "上海市" not in words(msr, without("coarse_suffixes")) and "新华社" in words(msr, without("coarse_suffixes"))
    assert "—" not in words(msr, without("split_marks"))
    assert words(msr, without("join_dates"))[2:4] == ["１９９７年", "１２月"]
    # join_dates joins the number+unit words number_units makes: without those, no date either
    # (join_digit_measures, after join_dates, would give a number its 年 and 月 too)
    assert words(msr, without("number_units", "join_digit_measures"))[2:6] == ["１９９７", "年", "１２", "月"]
    assert words(msr, without("number_units"))[2:4] == ["１９９７年", "１２月"]
    assert words(msr, ()) == WORDS  # no row, no rule


def test_removing_a_decoder_row_turns_its_join_off(monkeypatch):
    assert Level.at(0.5, PROFILE, WordDecoding(), STANDARDS["msr"]).decoding.join3_logp == STANDARDS["msr"].rules.join3_logp
    monkeypatch.setattr("segmenter.standards.levels.TABLE", without("join3_logp"))
    assert Level.at(0.5, PROFILE, WordDecoding(), STANDARDS["msr"]).decoding.join3_logp is None
    monkeypatch.setattr("segmenter.standards.levels.TABLE", without("pair_joins"))
    assert Level.at(0.5, PROFILE, WordDecoding(), STANDARDS["ud"]).decoding.join3 == WordDecoding().join3


def test_a_standard_of_ones_own_differs_where_its_switch_does():
    pku = STANDARDS["pku"]
    mine = Standard("mine", "PKU with names whole", pku.profile_level, replace(pku.rules, split_surnames=False))
    assert words(mine.rules) == ["江泽民"] + words(pku.rules)[2:]
    assert words(replace(pku.rules, number_units=False))[3:7] == ["１９９７", "年", "１２", "月"]  # any row switches
    # the coarse suffixes ride on the suffix rule: alone, they join nothing
    assert "上海市" not in words(replace(STANDARDS["msr"].rules, join_suffixes=False))
    assert standard_named(mine.to_dict()) == mine
    with pytest.raises(ValueError, match="counts must be one of"):
        Rules(counts="medium")
    # a row that takes any value reads a number: a list or a string is refused where the standard is made
    for bad in ([7.0], "7", float("inf")):
        with pytest.raises(ValueError, match="Rules.join3_logp must be a finite number or None"):
            standard_named({**mine.to_dict(), "rules": {**mine.to_dict()["rules"], "join3_logp": bad}})
    assert replace(pku.rules, join_long=0.5).join_long == 0.5


def test_a_standard_saved_in_the_old_rules_format_still_loads():
    old = {"name": "calibrated", "about": "saved before the rule table", "profile_level": 1.0,
           "rules": {"counts": "coarse", "split_surnames": False, "join_suffixes": True, "coarse_suffixes": True,
                     "join_dates": True, "split_marks": True, "pair_joins": True, "join3_logp": 7.0}}
    loaded = standard_named(old)
    # rows added since take the general standard's setting (MSR's number_units is "any" since, its
    # function words "coarse", it writes list numbers apart and numbers in digits with their measure)
    assert loaded.rules == replace(STANDARDS["msr"].rules, number_units=True, split_function_words=True,
                                   join_list_numbers="any", join_digit_measures=False)
    assert loaded.profile_level == 1.0
    with pytest.raises(ValueError, match="split_surnames"):  # a switch no row has
        standard_named({**old, "rules": {**old["rules"], "no_such_rule": True}})


def test_calibrate_tries_each_searched_row_once():
    general = STANDARDS["general"].rules
    options = rule_options(general)
    changed = [[f.name for f in fields(Rules) if getattr(o, f.name) != getattr(general, f.name)] for o in options]
    assert all(len(names) == 1 for names in changed)
    searched = [row.name for row in TABLE for value in row.search if value != getattr(general, row.name)]
    assert [names[0] for names in changed] == searched
    assert {"counts", "split_surnames", "join3_logp", "pair_joins"} <= set(searched)
    assert "join_han_numbers" not in searched and "number_units" in searched  # a row every standard applies stays on


def test_rules_and_conventions_travel_to_workers():
    for value in (Conventions(units=""), STANDARDS["msr"].rules, STANDARDS["ud"]):
        assert pickle.loads(pickle.dumps(value)) == value
        assert hash(pickle.loads(pickle.dumps(value))) == hash(value)  # lru_cache keys
    with pytest.raises(ValueError, match="name_share"):
        Conventions(name_share=float("nan"))
    with pytest.raises(TypeError, match="surnames"):
        Conventions(surnames=None)


def test_membership_by_search_is_isin():
    """The rules ask which code points (or character pairs) are among a list by one search in the
    sorted list (rule_texts.among_sorted), not np.isin: the same answer, empty lists and astral code points too."""
    from segmenter.text.batch import among_sorted, codes_of, is_among

    rng = np.random.default_rng(0)
    for size in (0, 1, 7, 300):
        members = np.unique(rng.integers(0, 0x110000, size))
        values = np.concatenate([rng.integers(0, 0x110000, 50), members[:5], [0, 0x10FFFF]]).astype(np.int64)
        assert (among_sorted(values, members) == np.isin(values, members)).all()
    codes = np.array([ord(c) for c in "就是他们𠀀了"], dtype=np.int64)
    assert is_among(codes, "了就𠀀就").tolist() == [True, False, False, False, True, True]
    assert codes_of("了就就").tolist() == sorted({ord("了"), ord("就")})


def test_texts_having_finds_the_texts_that_hold_the_characters():
    """Texts.having: the texts of a batch holding one of the characters (then one of `then`);
    a text without any skips numpy, an empty list finds nothing."""
    from segmenter.text.batch import Texts
    from segmenter.text.runs import split_runs

    batch = ["第3届大会", "没有数字", "３月", "第一"]
    texts = Texts(batch, [split_runs(t) for t in batch])
    digits = "0123456789０１２３４５６７８９"
    assert texts.having(digits) == [0, 2]
    assert texts.having("第", digits) == [0]  # 第 then a digit: not 第一
    assert texts.having("第") == [0, 3]
    assert texts.having("") == [] and texts.having("x") == []
