"""jieba's search and full modes from given levels' tokens (search_modes.py), checked exactly: the
API tests run them on a tiny random model, whose levels seldom differ enough to show sub-words."""
from segmenter.words.assembly import Token
from segmenter.words.search_modes import full_mode_tokens, known_parts, nest, search_tokens

TEXT = "中国科学院计算所"
DEFAULT = [Token("中国科学院", 0, 5), Token("计算所", 5, 8)]
FINER = [[Token("中国", 0, 2), Token("科学院", 2, 5), Token("计算", 5, 7), Token("所", 7, 8)],
         [Token("中国", 0, 2), Token("科学", 2, 4), Token("院", 4, 5), Token("计算", 5, 7), Token("所", 7, 8)]]


def test_search_puts_each_words_sub_words_before_it_shortest_first():
    tokens = search_tokens(TEXT, DEFAULT, FINER, word_table=None)
    assert [t.word for t in tokens] == ["中国", "科学", "科学院", "中国科学院", "计算", "计算所"]
    assert all(TEXT[start:end] == word for word, start, end in tokens)


def test_full_mode_is_every_levels_candidates_once_single_characters_only_uncovered():
    tokens = full_mode_tokens([FINER[1], FINER[0], DEFAULT])
    assert [t.word for t in tokens] == ["中国", "中国科学院", "科学", "科学院", "计算", "计算所"]
    assert full_mode_tokens([[Token("我", 0, 1)]]) == [Token("我", 0, 1)] and full_mode_tokens([[]]) == []


def test_nest_pairs_each_coarse_token_with_the_fine_ones_inside_it():
    pairs = list(nest(DEFAULT, FINER[1]))
    assert [(word, [w for w, _, _ in parts]) for (word, _, _), parts in pairs] == [
        ("中国科学院", ["中国", "科学", "院"]), ("计算所", ["计算", "所"])]


def test_known_parts_are_the_units_the_word_table_uses_as_words():
    """The embedded table's unigram model: 头孢 is a word of 头孢曲松, 孢曲 and 头孢曲 are not."""
    from segmenter import default_segmenter

    table = default_segmenter().word_table
    parts = {t.word for t in known_parts("头孢曲松", [Token("头孢曲松", 0, 4)], table)}
    assert "头孢" in parts and not {"孢曲", "头孢曲"} & parts
    assert known_parts("我们", [Token("我们", 0, 2)], table) == set()  # a two-character word has none
