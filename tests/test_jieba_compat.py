"""jieba's README examples, run unchanged with `import segmenter as jieba`, and what they must
mean here: words tile the text, offsets point at the words, dictionary words come out whole.
Fast tests run the module-level calls on a tiny random model; one slow test uses the shipped
model for the cases where the words themselves matter."""
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import segmenter
from segmenter import Segmenter
from segmenter.words.assembly import Token

from conftest import run_cli

# jieba's test/userdict.txt
USERDICT = "云计算 5\n李小福 2 nr\n创新办 3 i\neasy_install 3 eng\n好用 300\n韩玉赏鉴 3 nz\n八一双鹿 3 nz\n台中\n凱特琳 nz\nEdu Trust认证 2000\n"


@pytest.fixture
def jieba(tiny_model_dir, monkeypatch):
    """The segmenter module, its default model replaced by a fresh tiny one (own dictionary)."""
    tiny = Segmenter(tiny_model_dir, window=30, overlap=8)
    monkeypatch.setattr(segmenter, "default_segmenter", lambda: tiny)
    return segmenter


def check_search_tokens(search, default):
    """Search mode: the default tokens in order, each after its sub-words (inside it, >= 2 chars)."""
    assert [t for t in search if t in default] == default
    k = 0
    for token in search:
        if token == default[k]:
            k += 1
        else:
            word, start, end = token
            assert default[k][1] <= start < end <= default[k][2] and end - start >= 2


def check_full_tokens(full, text):
    """Full mode: real slices of the text that together cover it, by start then end."""
    assert all(text[start:end] == word for word, start, end in full)
    assert {i for _, start, end in full for i in range(start, end)} == set(range(len(text)))
    assert full == sorted(full, key=lambda t: (t[1], t[2]))


def test_readme_main_example(jieba):
    jieba.enable_paddle()  # 启动paddle模式。 0.40版之后开始支持，早期版本不支持
    strs = ["我来到北京清华大学", "乒乓球拍卖完了", "中国科学技术大学"]
    for str in strs:  # noqa: A001 (jieba's README names it so)
        seg_list = jieba.cut(str, use_paddle=True)  # 使用paddle模式
        print("Paddle Mode: " + '/'.join(list(seg_list)))
        assert jieba.lcut(str, use_paddle=True) == jieba.lcut(str)  # no paddle model here: the same words

    seg_list = jieba.cut("我来到北京清华大学", cut_all=True)
    full = list(seg_list)
    print("Full Mode: " + "/ ".join(full))  # 全模式
    seg_list = jieba.cut("我来到北京清华大学", cut_all=False)
    default = list(seg_list)
    print("Default Mode: " + "/ ".join(default))  # 精确模式
    seg_list = jieba.cut("他来到了网易杭研大厦")  # 默认是精确模式
    print(", ".join(seg_list))
    seg_list = jieba.cut_for_search("小明硕士毕业于中国科学院计算所，后在日本京都大学深造")  # 搜索引擎模式
    print(", ".join(seg_list))

    assert "".join(default) == "我来到北京清华大学"
    full_tokens = jieba.default_segmenter().full_tokens("我来到北京清华大学")
    assert full == [w for w, _, _ in full_tokens]
    check_full_tokens(full_tokens, "我来到北京清华大学")
    text = "小明硕士毕业于中国科学院计算所，后在日本京都大学深造"
    search = jieba.tokenize(text, mode="search")
    assert jieba.lcut_for_search(text) == [w for w, _, _ in search]
    check_search_tokens(search, jieba.tokenize(text))


def test_cut_all_candidates_overlap_and_cover(jieba):
    text = "我们都是中国人民的好朋友，也是世界和平的力量。"
    full = jieba.default_segmenter().full_tokens(text)
    check_full_tokens(full, text)
    assert jieba.lcut(text, cut_all=True) == [w for w, _, _ in full]
    levels = {tuple(jieba.lcut(text, granularity=g)) for g in ("fine", "default", "coarse")}
    assert {w for words in levels for w in words if len(w) > 1} <= {w for w, _, _ in full}


def test_tokenize_default_and_search(jieba):
    result = jieba.tokenize("永和服装饰品有限公司")
    for tk in result:
        print("word %s\t\t start: %d \t\t end:%d" % (tk[0], tk[1], tk[2]))
    text = "永和服装饰品有限公司"
    assert [t[1] for t in result] == [0] + [t[2] for t in result[:-1]] and result[-1][2] == len(text)
    assert all(text[start:end] == word for word, start, end in result)
    result = jieba.tokenize("永和服装饰品有限公司", mode="search")
    for tk in result:
        print("word %s\t\t start: %d \t\t end:%d" % (tk[0], tk[1], tk[2]))
    assert all(text[start:end] == word for word, start, end in result)
    check_search_tokens(result, jieba.tokenize(text))
    with pytest.raises(ValueError, match="mode must be 'default' or 'search'"):
        jieba.tokenize(text, mode="full")


def test_search_mode_gives_tokens_all_through():
    """The search mode's sub-words that the word table adds (有限 公司 of 有限公司) are Tokens, as
    the levels' are: t.word works on every item (the shipped model: a tiny one has no table)."""
    text = "永和服装饰品有限公司"
    result = segmenter.tokenize(text, mode="search")
    assert {"有限", "公司", "有限公司"} <= {t.word for t in result}
    assert all(isinstance(t, Token) and text[t.start:t.end] == t.word for t in result)


def test_userdict_example(jieba, tmp_path):
    path = tmp_path / "userdict.txt"
    path.write_text(USERDICT, encoding="utf-8")
    jieba.load_userdict(str(path))
    jieba.add_word("石墨烯")
    jieba.add_word("凱特琳")
    jieba.del_word("自定义词")
    test_sent = (
        "李小福是创新办主任也是云计算方面的专家; 什么是八一双鹿\n"
        "例如我输入一个带“韩玉赏鉴”的标题，在自定义词库中也增加了此词为N类\n"
        "「台中」正確應該不會被切開。mac上可分出「石墨烯」；此時又可以分出來凱特琳了。"
    )
    words = jieba.cut(test_sent)
    result = list(words)
    print("/".join(result))
    assert "".join(result) == test_sent
    for word in ("李小福", "创新办", "云计算", "八一双鹿", "韩玉赏鉴", "台中", "石墨烯", "凱特琳"):
        assert word in result
    terms = jieba.lcut("easy_install is great")
    assert terms[0] == "easy_install"
    assert "好用" in jieba.lcut("python 的正则表达式是好用的")
    assert "Edu Trust认证" in jieba.lcut("他拿到了Edu Trust认证。")


def test_userdict_file_object_and_add_word_with_freq_and_tag(jieba, tmp_path):
    path = tmp_path / "userdict.txt"
    path.write_text(USERDICT, encoding="utf-8")
    with open(path, "rb") as f:
        assert jieba.load_userdict(f) == 10
    jieba.add_word("中国人民", freq=100, tag="nt")
    assert jieba.get_FREQ("中国人民") == 100 and jieba.get_FREQ("没有") is None
    assert "中国人民" in jieba.lcut("我们都是中国人民的好朋友", HMM=False)
    jieba.del_word("中国人民")
    assert jieba.get_FREQ("中国人民") is None


def test_suggest_freq_example(jieba):
    testlist = [
        ("今天天气不错", ("今天", "天气")),
        ("如果放到post中将出错。", ("中", "将")),
        ("我们中出了一个叛徒", ("中", "出")),
    ]
    for sent, seg in testlist:
        print("/".join(jieba.cut(sent, HMM=False)))
        word = "".join(seg)
        print("%s Before: %s, After: %s" % (word, jieba.get_FREQ(word), jieba.suggest_freq(seg, True)))
        after = jieba.lcut(sent, HMM=False)
        print("/".join(after))
        assert all(piece in after for piece in seg) and "".join(after) == sent
    assert jieba.suggest_freq("台中", True) >= 1
    assert "台中" in jieba.lcut("「台中」正确应该不会被切开", HMM=False)


def test_a_bad_userdict_loads_nothing(jieba, tmp_path):
    path = tmp_path / "bad.txt"
    path.write_text("云计算 5\n李小福 2 nr\n创新办 three i\n好用 1.5\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad\.txt, line 4"):
        jieba.load_userdict(path)
    assert jieba.get_FREQ("云计算") is None and jieba.get_FREQ("李小福") is None  # lines 1-2 not loaded either
    path.write_text("云计算 5\n李小福 2 nr\n", encoding="utf-8")
    assert jieba.load_userdict(path) == 2 and jieba.get_FREQ("李小福") == 2


def test_granularity_is_a_keyword_here(jieba):
    assert jieba.lcut("我们都是中国人民", granularity="fine") == jieba.segment("我们都是中国人民", "fine")
    with pytest.raises(TypeError, match="granularity is a keyword argument"):
        jieba.lcut("我们都是中国人民", "fine")
    with pytest.raises(ValueError, match="granularity is a keyword argument"):
        jieba.tokenize("我们都是中国人民", "coarse")
    # ... in HMM's place too (HMM itself is accepted and ignored: jieba's HMM=False still runs)
    for call in (lambda: jieba.lcut("我们都是中国人民", False, "coarse"), lambda: jieba.lcut_for_search("我们", "fine"),
                 lambda: jieba.tokenize("我们", "default", "fine")):
        with pytest.raises(TypeError, match="HMM must be True or False.*granularity is a keyword argument"):
            call()
    assert jieba.lcut("我们都是中国人民", False, False) == jieba.lcut("我们都是中国人民")



def test_use_paddle_parallel_set_log_level_dt_and_bytes(jieba):
    """jieba's fourth argument of cut, use_paddle, is taken (and ignored, as jieba without paddle
    does); setLogLevel sets the package logger, which the progress bar follows; dt is the default
    instance; bytes get an error that says to decode them."""
    import logging

    text = "我们都是中国人民"
    assert jieba.lcut(text, False, True, False) == jieba.lcut(text, use_paddle=True) == jieba.lcut(text)
    assert list(jieba.cut(text, use_paddle=False)) == jieba.lcut(text)
    with pytest.raises(TypeError, match="use_paddle must be True or False"):
        jieba.lcut(text, False, True, "fine")
    # any false or true value jieba takes for a flag (None, numpy's bool); numpy numbers for granularity
    assert jieba.lcut(text, None, None) == jieba.lcut(text, np.bool_(False), np.bool_(True)) == jieba.lcut(text)
    assert jieba.lcut(text, granularity=np.float32(0.0)) == jieba.lcut(text, granularity="fine")
    assert jieba.lcut(text, granularity=np.int64(1)) == jieba.lcut(text, granularity="coarse")
    logger = logging.getLogger("segmenter")
    before = logger.level
    try:
        jieba.setLogLevel(logging.WARNING)
        assert logger.level == logging.WARNING
        from segmenter.model.reader import progress_enabled
        assert not progress_enabled(None)
        jieba.setLogLevel(logging.INFO)
        assert progress_enabled(None)
    finally:
        logger.setLevel(before)
    assert jieba.dt is jieba.default_segmenter()
    jieba.enable_parallel(4)  # jieba's README: nothing to do here, every core is used already
    assert jieba.lcut(text) == jieba.lcut(text, False)
    jieba.disable_parallel()
    jieba.enable_parallel(np.int64(2))  # any integer jieba's Pool takes
    for bad in (0, 2.5, "4"):
        with pytest.raises(ValueError, match="processnum must be a positive int"):
            jieba.enable_parallel(bad)
    with pytest.raises(TypeError, match=r"word must be a str, got bytes \(decode it first"):
        jieba.add_word("云计算".encode("utf-8"))
    with pytest.raises(TypeError, match=r"got bytes \(decode it first"):
        jieba.lcut(text.encode("utf-8"))


# -- the command line --------------------------------------------------------------------------
@pytest.mark.slow
def test_cli_user_dict_keeps_words_whole(tiny_model_dir, tmp_path):
    userdict = tmp_path / "userdict.txt"
    userdict.write_text(USERDICT, encoding="utf-8")
    extra = tmp_path / "extra.txt"
    extra.write_text("社会发展 3\n", encoding="utf-8")
    text = "李小福是创新办主任也是云计算方面的专家，社会发展 Edu Trust认证\n"
    result = run_cli("-m", tiny_model_dir, "-q", "-d", "/", "-u", userdict, "--user-dict", extra, stdin=text.encode())
    assert result.returncode == 0, result.stderr.decode()
    words = result.stdout.decode("utf-8").rstrip("\n").split("/")
    for word in ("李小福", "创新办", "云计算", "社会发展", "Edu Trust认证"):
        assert word in words
    search = run_cli("-m", tiny_model_dir, "-q", "--mode", "search", "-u", userdict, stdin=text.encode())
    assert search.returncode == 0 and "创新办" in search.stdout.decode("utf-8").split()


@pytest.mark.slow
def test_cli_checks_before_the_model_loads(tmp_path):
    # A model that does not exist: every error below must come from the check made before it.
    bad = tmp_path / "bad.txt"
    bad.write_text("好用 300\n云计算 5.5\n", encoding="utf-8")
    text = tmp_path / "in.txt"
    text.write_text("你好\n", encoding="utf-8")
    for args, message in [
        (("-u", bad, text), b"bad.txt, line 2"),
        (("-u", tmp_path / "none.txt", text), b"none.txt: no such file"),
        (("-o", tmp_path / "no" / "dir" / "out.txt", text), b"does not exist"),
    ]:
        result = run_cli("-m", tmp_path / "no-model", *args)
        assert result.returncode == 2 and message in result.stderr and b"Traceback" not in result.stderr
    empty = run_cli("-m", tmp_path / "no-model", stdin=b"")  # nothing to segment, but the model's name is checked
    assert empty.returncode == 2 and empty.stdout == b"" and b"no-model does not exist" in empty.stderr


@pytest.mark.slow
def test_cli_takes_jiebas_options(tiny_model_dir, tmp_path):
    """python -m jieba's -a, -n and -V mean the same here; its -D and -p say why not, before any
    model loads."""
    text = "我们都是中国人民\n".encode()
    full = run_cli("-m", tiny_model_dir, "-q", "--mode", "full", stdin=text)
    assert full.returncode == 0 and full.stdout
    for args in (("-a",), ("-a", "-n"), ("--cut-all", "--mode", "full")):
        result = run_cli("-m", tiny_model_dir, "-q", *args, stdin=text)
        assert result.returncode == 0 and result.stdout == full.stdout
    plain = run_cli("-m", tiny_model_dir, "-q", stdin=text)
    assert run_cli("-m", tiny_model_dir, "-q", "--no-hmm", stdin=text).stdout == plain.stdout
    assert run_cli("-V").stdout.decode().strip() == f"segmenter {segmenter.__version__}"
    for args, message in ((("-D", "dict.txt"), b"no dictionary to replace"), (("-p",), b"no part-of-speech"),
                          (("-a", "--mode", "search"), b"-a is --mode full")):
        result = run_cli("-m", tmp_path / "no-model", *args, stdin=text)
        assert result.returncode == 2 and message in result.stderr and b"Traceback" not in result.stderr


@pytest.mark.slow
def test_cli_version():
    result = run_cli("--version")
    assert result.returncode == 0 and result.stdout.decode().strip() == f"segmenter {segmenter.__version__}"


@pytest.mark.slow
def test_cli_missing_extra_is_one_line(tiny_model_dir, tmp_path):
    fake = tmp_path / "fake"
    fake.mkdir()
    (fake / "matplotlib.py").write_text("raise ModuleNotFoundError(\"No module named 'matplotlib'\", name='matplotlib')\n")
    env = {"PYTHONPATH": str(fake)}
    result = run_cli("heads", "-m", tiny_model_dir, "--show", "我们", "--png", tmp_path / "x.png", env=env)
    assert result.returncode == 2, result.stderr.decode()
    assert b"pip install 'segmenter-heads[plot]'" in result.stderr and b"Traceback" not in result.stderr


@pytest.mark.slow
def test_cli_sigterm_removes_the_part_file(tiny_model_dir, tmp_path):
    out = tmp_path / "out.txt"
    env = dict(os.environ, PYTHONIOENCODING="utf-8")
    process = subprocess.Popen(
        [sys.executable, "-m", "segmenter", "-q", "-m", str(tiny_model_dir), "-o", str(out)],
        stdin=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
    )
    process.stdin.write("我们都是中国人民的好朋友。\n".encode() * 10)
    process.stdin.flush()  # stdin stays open: the command waits for more, its .part file open
    deadline = time.monotonic() + 120
    while not list(tmp_path.glob(".out.txt.*.part")) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert list(tmp_path.glob(".out.txt.*.part")), "the .part file never appeared"
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 143 and b"terminated" in err, err.decode()
    assert not list(tmp_path.iterdir())


# -- the shipped model: the words themselves ---------------------------------------------------
@pytest.mark.slow
def test_crossing_user_words_on_the_shipped_model(monkeypatch):
    shipped = Segmenter(num_threads=1)
    monkeypatch.setattr(segmenter, "default_segmenter", lambda: shipped)
    jieba = segmenter
    jieba.add_word("北京大学")
    jieba.add_word("大学生")
    # Equal frequencies: the heads decide (they cut 京|大 and 生|前), as jieba's own result.
    assert jieba.lcut("北京大学生前来应聘")[:2] == ["北京", "大学生"]
    jieba.add_word("北京大学", freq=jieba.suggest_freq("北京大学"))  # higher frequency wins
    assert jieba.lcut("北京大学生前来应聘")[0] == "北京大学"
    text = "小明硕士毕业于中国科学院计算所，后在日本京都大学深造"
    search = jieba.lcut_for_search(text)
    assert "中国" in search and "科学" in search and set(jieba.lcut(text)) <= set(search)
