"""The small-input path (issue 57: one short text per call) gives the batch path's words.

A short text is decoded in plain Python (words/decoding_few.py) and segment() skips the batch
machinery; these check, over random texts of every kind of character, that segment(text) is
segment_batch([text, others...])[0], that the words join back to the text, and that the Python
decoder decides every junction as the numpy one does (decoding.FEW_CHARS = 0 turns it off) and the
conventions' Python gates for a few words (word_rules.FEW_WORDS = 0 turns them off) change no word.
"""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from segmenter import Segmenter
from segmenter.model.folders import SHIPPED_MODELS
from segmenter.standards import word_rules
from segmenter.words import decoding

pytestmark = pytest.mark.slow  # the shipped models

HAN = "的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体制机当使点从业本去把性好应开它合还因由其些然前外天政四日那社义事平形相全表间样与关各重新线内数正心反你明看原又么利比或但质气第向道命此变条只没结解问意建月公无系军很情者最立代想已通并提直题党程展五果料象员革位入常文总次品式活设及管特件长求老头基资边流路级少图山统接知较将组见计别她手角期根论运农指几九区强放决西被干做必战先回则任取据处理府研质"
LATIN = "abcxyzABCXYZ"
DIGITS = "0123456789０１２３４５６７８９"
PUNCT = "，。！？、；：“”（）《》—…-.,!?:%/"
SPACES = " \t\u3000\n"
NUMBER_HAN = "一二三四五六七八九十百千万亿零两第个年月日次"
ALPHABET = HAN + NUMBER_HAN + LATIN + DIGITS + PUNCT + SPACES
SENTENCES = ["我爱北京天安门", "今天天气不错", "他说的确实在理", "结婚的和尚未结婚的", "１９９７年２月５日，江泽民说",
             "第十五次全国代表大会", "翻山越岭，中华人民共和国成立了", "iPhone 15 售价5999元。", "你好！为什么？",
             "百分之四十二点八的人认为不是", "联合国大会在纽约召开", ""]

texts = st.one_of(
    st.text(alphabet=HAN, max_size=30),
    st.text(alphabet=ALPHABET, max_size=40),
    st.lists(st.sampled_from(SENTENCES + list(PUNCT) + [" ", "12", "abc"]), max_size=6).map("".join),
)


@pytest.fixture(scope="module", params=list(SHIPPED_MODELS))
def shipped(request):
    return Segmenter(request.param if request.param != "default" else None)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=texts, others=st.lists(texts, max_size=3), granularity=st.sampled_from(["fine", "default", "coarse"]))
def test_segment_is_the_batch_path(shipped, text, others, granularity):
    words = shipped.segment(text, granularity)
    assert "".join(words) == text
    assert words == shipped.segment_batch([text, *others], granularity)[0]
    assert words == shipped.lcut(text, granularity=granularity)
    assert [t.word for t in shipped.tokenize(text, granularity=granularity)] == words


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=texts, others=st.lists(texts, max_size=3), standard=st.sampled_from(["general", "pku", "msr", "ud"]),
       granularity=st.sampled_from(["fine", "default", "coarse"]))
def test_the_python_decoder_decides_as_the_numpy_one(shipped, text, others, standard, granularity, monkeypatch):
    plans = shipped.score_texts([text, *others])  # a few texts: one batch text of a few characters
    for batch in ([plans[0]], plans):
        few = shipped.assemble(batch, granularity, standard=standard)
        with monkeypatch.context() as patch:
            patch.setattr(decoding, "FEW_CHARS", 0)
            patch.setattr(word_rules, "FEW_WORDS", 0)
            assert few == shipped.assemble(batch, granularity, standard=standard)


@pytest.mark.parametrize("text", SENTENCES)
def test_each_sentence_alone_and_in_a_batch(shipped, text):
    alone = shipped.segment(text)
    assert alone == shipped.segment_batch(SENTENCES)[SENTENCES.index(text)]
    assert "".join(alone) == text
