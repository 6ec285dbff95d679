"""`segmenter serve` (segmenter/serve/): the routes in-process (Starlette's TestClient) over the tiny
test model, the shipped model's words against segment_batch (slow), and a real server in a
subprocess: the token, a 60 MB body, SIGTERM with a request in flight (slow)."""
from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import threading
import time

import pytest

pytest.importorskip("starlette", reason="the serve extra is not installed: pip install 'segmenter-heads[serve]'")
pytest.importorskip("httpx", reason="Starlette's TestClient needs httpx")

from conftest import GOLD
from starlette.testclient import TestClient

from segmenter.serve import Limits, create_app
from segmenter.serve.app import explain_texts
from segmenter.serve.batching import Views

TEXTS = ["我爱北京天安门", "今天天气不错，我们去公园散步。", "", "abc 123 你好", "１９９７年２月江泽民说：“中华人民共和国成立了”。"]


@pytest.fixture(scope="module")
def client(tiny_segmenter):
    limits = Limits(max_body_bytes=4096, max_texts=5, max_chars=200, batch_wait_ms=2)
    with TestClient(create_app(tiny_segmenter, limits)) as test_client:
        yield test_client


@pytest.fixture(scope="module")
def token_client(tiny_segmenter):
    with TestClient(create_app(tiny_segmenter, token="s3cret")) as test_client:
        yield test_client


# -- the words -------------------------------------------------------------------------------------

def test_words_are_segment_batchs(client, tiny_segmenter):
    answer = client.post("/segment", json={"texts": TEXTS})
    assert answer.status_code == 200
    assert answer.json() == {"words": tiny_segmenter.segment_batch(TEXTS, show_progress=False)}


def test_offsets_tile_each_text(client, tiny_segmenter):
    answer = client.post("/segment", json={"texts": TEXTS, "offsets": True, "granularity": "fine"}).json()
    assert answer["words"] == tiny_segmenter.segment_batch(TEXTS, "fine", show_progress=False)
    for text, tokens in zip(TEXTS, answer["tokens"]):
        assert [list(t) for t in tiny_segmenter.tokenize_batch([text], "fine", show_progress=False)[0]] == tokens
        assert "".join(text[start:end] for _, start, end in tokens) == text
        assert all(text[start:end] == word for word, start, end in tokens)


def test_a_standard_and_search_mode(client, tiny_segmenter):
    answer = client.post("/segment", json={"texts": TEXTS[:2], "standard": "msr", "granularity": 0.8}).json()
    plans = tiny_segmenter.score_texts(TEXTS[:2], show_progress=False)
    assert answer["words"] == [[w for w, _, _ in t] for t in tiny_segmenter.assemble(plans, 0.8, standard="msr")]
    search = client.post("/segment", json={"texts": TEXTS[:2], "mode": "search"}).json()
    assert search["words"] == [[w for w, _, _ in tiny_segmenter.tokenize(t, mode="search")] for t in TEXTS[:2]]


def test_requests_that_arrive_together_get_their_own_words(tiny_segmenter):
    """Concurrent requests of different groups, batched: each gets the words of its own texts."""
    limits = Limits(batch_wait_ms=50)
    app = create_app(tiny_segmenter, limits)
    asks = [({"texts": [t]}, None) for t in TEXTS] + [({"texts": TEXTS[:2], "granularity": "coarse"}, "coarse")]
    answers = [None] * len(asks)
    with TestClient(app) as test_client:
        def ask(i):
            answers[i] = test_client.post("/segment", json=asks[i][0]).json()

        threads = [threading.Thread(target=ask, args=(i,)) for i in range(len(asks))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        metrics = test_client.get("/metrics").text
    for (body, granularity), answer in zip(asks, answers):
        assert answer == {"words": tiny_segmenter.segment_batch(body["texts"], granularity, show_progress=False)}
    batches = int(re.search(r"^segmenter_batches_total (\d+)$", metrics, re.MULTILINE).group(1))
    assert 1 <= batches <= len(asks)


# -- bad requests: a 4xx with a JSON error, never a traceback ----------------------------------------

@pytest.mark.parametrize("body, words", [
    (b"{", "malformed JSON"),
    (b'{"texts": ["a"],}', "malformed JSON"),
    (b"\xff\xfe{}", "not UTF-8"),
    ("{\"texts\": [\"北京\"]}".encode("gb18030"), "not UTF-8"),
    (b"", "empty"),
    (b"[]", "must be a JSON object"),
    (b"null", "must be a JSON object"),
    (b'{"texts": []}', "is empty"),
    (b'{"texts": "abc"}', "array of strings"),
    (b'{"texts": [1]}', '"texts"[0] must be a string'),
    (b'{"texts": [null]}', '"texts"[0] must be a string'),
    (b'{"text": "abc"}', '"texts" is missing'),
    (b'{"texts": ["a"], "mode": "full"}', '"mode"'),
    (b'{"texts": ["a"], "offsets": "yes"}', '"offsets"'),
    (b'{"texts": ["a"], "standard": "jieba"}', '"standard"'),
    (b'{"texts": ["a"], "granularity": "huge"}', '"granularity"'),
    (b'{"texts": ["a"], "granularity": [1]}', '"granularity"'),
    (b'{"texts": ["a"], "granularity": 2}', '"granularity"'),
    (b'{"texts": ["a"], "granularty": "fine"}', "unknown field 'granularty'"),
    (b'{"texts": ["\\ud800"]}', "lone surrogate"),
    (b"[" * 2000 + b"]" * 2000, "nested too deeply"),
])
def test_bad_bodies_are_400_with_a_json_error(client, body, words):
    answer = client.post("/segment", content=body, headers={"Content-Type": "application/json"})
    assert answer.status_code == 400, answer.text
    assert words in answer.json()["error"]
    assert "Traceback" not in answer.text


def test_limits_say_which(client):
    too_big = client.post("/segment", content=json.dumps({"texts": ["好" * 150] * 20}).encode())
    assert too_big.status_code == 413 and too_big.json()["limit"] == "max_body_bytes"
    too_many = client.post("/segment", json={"texts": ["好"] * 6})
    assert too_many.status_code == 400 and too_many.json()["limit"] == "max_texts"
    too_long = client.post("/segment", json={"texts": ["好", "好" * 201]})
    assert too_long.status_code == 400 and too_long.json()["limit"] == "max_chars"
    assert too_long.json()["index"] == 1 and "--max-chars" in too_long.json()["error"]


def test_a_body_without_content_length_is_counted_as_it_comes(client):
    def chunks():
        for _ in range(10):
            yield b" " * 1000

    answer = client.post("/segment", content=chunks())
    assert answer.status_code == 413 and answer.json()["limit"] == "max_body_bytes"


def test_unknown_paths_and_methods_are_json(client):
    assert client.get("/nowhere").status_code == 404 and "/segment" in client.get("/nowhere").json()["error"]
    assert client.get("/segment").status_code == 405 and "error" in client.get("/segment").json()


def test_a_timeout_is_504(tiny_segmenter):
    with TestClient(create_app(tiny_segmenter, Limits(timeout_s=0.0001, batch_wait_ms=200))) as test_client:
        answer = test_client.post("/segment", json={"texts": ["我爱北京天安门"]})
        assert answer.status_code == 504 and answer.json()["limit"] == "timeout_s"
        assert test_client.get("/health").status_code == 200  # and the service goes on


# -- token, health, metrics, page ------------------------------------------------------------------

def test_token(token_client):
    assert token_client.post("/segment", json={"texts": ["好"]}).status_code == 401
    wrong = token_client.post("/segment", json={"texts": ["好"]}, headers={"Authorization": "Bearer nope"})
    assert wrong.status_code == 401 and "Authorization: Bearer" in wrong.json()["error"]
    assert wrong.headers["www-authenticate"] == "Bearer"
    assert token_client.get("/metrics").status_code == 401
    assert token_client.post("/explain", json={"text": "好"}).status_code == 401
    good = {"Authorization": "Bearer s3cret"}
    assert token_client.post("/segment", json={"texts": ["好"]}, headers=good).json() == {"words": [["好"]]}
    assert token_client.get("/metrics", headers=good).status_code == 200
    assert token_client.get("/health").json()["token"] is True  # /health and the page stay open
    assert token_client.get("/").status_code == 200


def test_health_and_metrics(client):
    health = client.get("/health").json()
    assert health["status"] == "ok" and health["standards"] == ["general", "pku", "msr", "ud"]
    client.post("/segment", json={"texts": ["我爱北京", "天安门"]})
    metrics = client.get("/metrics")
    assert metrics.headers["content-type"].startswith("text/plain")
    text = metrics.text
    assert re.search(r'^segmenter_requests_total\{path="/segment",status="200"\} [1-9]', text, re.MULTILINE)
    assert re.search(r'^segmenter_characters_total\{path="/segment"\} ([7-9]|\d\d+)$', text, re.MULTILINE)
    assert re.search(r'^segmenter_request_seconds_count\{path="/segment"\} [1-9]', text, re.MULTILINE)
    assert '# TYPE segmenter_request_seconds histogram' in text


def test_the_page_is_one_file_with_no_network(client):
    page = client.get("/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert 'id="text"' in page.text and "/explain" in page.text and "/segment" in page.text
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page.text)  # nothing fetched from elsewhere


# -- /explain ----------------------------------------------------------------------------------------

def test_explain_words_are_segments(client, tiny_segmenter):
    answer = client.post("/explain", json={"texts": TEXTS, "granularity": "fine"})
    assert answer.status_code == 200
    found = answer.json()["explanations"]
    assert [e["words"] for e in found] == tiny_segmenter.segment_batch(TEXTS, "fine", show_progress=False)
    for text, record in zip(TEXTS, found):
        places = record["junctions"]
        assert [p["offset"] for p in places] == list(range(1, len(text)))
        ends = {sum(map(len, record["words"][: i + 1])) for i in range(len(record["words"]))}
        assert {p["offset"] for p in places if p["cut"]} == ends - {len(text)}
        for p in places:
            assert p["decided_by"] and p["why"]
            if p["kind"] == "junction":
                assert p["margin"] == pytest.approx(p["score"] - p["threshold"], abs=2e-3)
    assert client.post("/explain", json={"text": "好", "texts": ["好"]}).status_code == 400
    assert client.post("/explain", json={"text": 5}).json()["error"] == '"text" must be a string, got a number'


# -- the shipped model (slow) -----------------------------------------------------------------------

@pytest.fixture(scope="module")
def shipped():
    from segmenter import Segmenter

    return Segmenter(processes=False)


@pytest.fixture(scope="module")
def dev_lines():
    path = GOLD / "pku_dev.txt"
    if not path.is_file():
        pytest.skip(f"{path} is not here")
    with open(path, encoding="utf-8") as lines:
        return [line.replace(" ", "").strip() for _, line in zip(range(120), lines)]


@pytest.mark.slow
def test_shipped_words_equal_segment_batch_at_each_standard(shipped, dev_lines):
    with TestClient(create_app(shipped)) as test_client:
        answer = test_client.post("/segment", json={"texts": dev_lines}).json()
        assert answer["words"] == shipped.segment_batch(dev_lines, show_progress=False)
        assert answer["words"] == [shipped.segment(t) for t in dev_lines[:20]] + answer["words"][20:]
        plans = shipped.score_texts(dev_lines, show_progress=False)
        for standard in ("pku", "msr", "ud"):
            for granularity in ("fine", "coarse"):
                body = {"texts": dev_lines, "standard": standard, "granularity": granularity}
                words = test_client.post("/segment", json=body).json()["words"]
                assert words == [[w for w, _, _ in t] for t in shipped.assemble(plans, granularity, standard=standard)]
        search = test_client.post("/segment", json={"texts": dev_lines[:30], "mode": "search"}).json()["words"]
        assert search == [shipped.lcut_for_search(t) for t in dev_lines[:30]]


@pytest.mark.slow
def test_shipped_explanations_are_the_words(shipped, dev_lines):
    """The explanation's words are segment()'s at every standard, a user word too; and the rules
    and the user word that moved a boundary are named."""
    texts = dev_lines[:60] + ["江泽民说你好，十五部电影在高等法院", "我爱北京天安门广场"]
    shipped.add_word("天安门广场")
    try:
        for standard in ("general", "pku", "msr", "ud"):
            segmenter = Views(shipped).at(standard)
            found = explain_texts(segmenter, texts)
            assert [e["words"] for e in found] == segmenter.segment_batch(texts, show_progress=False)
        found = explain_texts(Views(shipped).at("pku"), texts[-2:])
        deciders = {p["decided_by"] for e in found for p in e["junctions"]}
        assert "user word 天安门广场" in deciders and "rule split_surnames" in deciders
        assert found[-1]["words"][-1] == "天安门广场"
    finally:
        shipped.del_word("天安门广场")


def _start(*options):
    process = subprocess.Popen([sys.executable, "-m", "segmenter", "serve", "--port", "0", "-q", *options],
                               stderr=subprocess.PIPE, text=True)
    line = process.stderr.readline()
    found = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
    if not found:
        process.kill()
        raise AssertionError(f"no address in {line!r}: {process.stderr.read()}")
    return process, f"http://127.0.0.1:{found.group(1)}"


@pytest.mark.slow
def test_a_real_server_token_big_body_and_sigterm():
    """The command: 401 without the token, 413 on a 60 MB body, and SIGTERM while a request is in
    flight: that request is answered, and the process exits 0."""
    import httpx

    process, url = _start("--token", "T", "--batch-wait", "400")
    try:
        with httpx.Client(base_url=url, timeout=60) as http:
            for _ in range(300):
                try:
                    assert http.get("/health").json()["status"] == "ok"
                    break
                except httpx.TransportError:
                    time.sleep(0.1)
            assert http.post("/segment", json={"texts": ["好"]}).status_code == 401
            auth = {"Authorization": "Bearer T"}
            big = http.post("/segment", content=b"x" * (60 << 20), headers=auth)
            assert big.status_code == 413 and big.json()["limit"] == "max_body_bytes"
            assert http.get("/").status_code == 200
            answers = []
            thread = threading.Thread(target=lambda: answers.append(
                httpx.post(f"{url}/segment", json={"texts": ["我爱北京天安门"] * 20}, headers=auth, timeout=60)))
            thread.start()
            for _ in range(600):  # until the request is in flight (this one's /metrics makes 2)
                if "segmenter_requests_in_flight 2" in http.get("/metrics", headers=auth).text:
                    break
                time.sleep(0.01)
            process.send_signal(signal.SIGTERM)
            thread.join(60)
        assert process.wait(timeout=60) == 0
        assert answers and answers[0].status_code == 200 and answers[0].json()["words"][0] == ["我", "爱", "北京", "天安门"]
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


@pytest.mark.slow
def test_workers_processes_answer_and_stop_on_sigterm():
    import httpx

    process, url = _start("--workers", "2")
    try:
        with httpx.Client(base_url=url, timeout=60) as http:
            for _ in range(600):
                try:
                    http.get("/health")
                    break
                except httpx.TransportError:
                    time.sleep(0.1)
            for _ in range(4):  # whichever process takes it
                assert http.post("/segment", json={"texts": ["我爱北京天安门"]}).json() == {
                    "words": [["我", "爱", "北京", "天安门"]]}
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=60) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_no_body_makes_it_fail(client):
    """Random bytes and random JSON values: always an answer below 500, JSON with "error" or "words"."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    values = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
                          lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                                        max_size=4), max_leaves=12)
    fields = st.fixed_dictionaries({}, optional={"texts": values | st.lists(st.text(max_size=30), max_size=3),
                                                 "standard": values, "granularity": values, "mode": values,
                                                 "offsets": values})

    @settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.binary(max_size=200) | fields.map(lambda d: json.dumps(d).encode()))
    def check(body):
        answer = client.post("/segment", content=body)
        assert answer.status_code in (200, 400, 413), answer.text
        assert ("words" if answer.status_code == 200 else "error") in answer.json()

    check()


def test_the_socket_gets_tcp_nodelay_connections():
    """asyncio sets TCP_NODELAY on the connections of a listening socket whose proto is TCP only;
    without it every keep-alive answer waited for the client's delayed ACK (~40 ms)."""
    import asyncio
    import socket

    from segmenter.serve.server import bind

    sock = bind("127.0.0.1", 0)
    try:
        assert sock.proto == socket.IPPROTO_TCP

        async def accepted_nodelay() -> int:
            found = asyncio.get_running_loop().create_future()

            def protocol():
                class Probe(asyncio.Protocol):
                    def connection_made(self, transport):
                        option = transport.get_extra_info("socket").getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
                        found.set_result(option)
                        transport.close()

                return Probe()

            server = await asyncio.get_running_loop().create_server(protocol, sock=sock)
            _, writer = await asyncio.open_connection(*sock.getsockname())
            try:
                return await asyncio.wait_for(found, 10)
            finally:
                writer.close()
                server.close()

        assert asyncio.run(accepted_nodelay()) != 0
    finally:
        sock.close()


def test_user_dictionaries_and_command_line_errors(tiny_model_dir, tmp_path, capsys):
    from segmenter.cli import main
    from segmenter.serve.server import load_segmenter

    words = tmp_path / "user.txt"
    words.write_text("天安门广场 10 ns\n北京大学\n", encoding="utf-8")
    segmenter = load_segmenter(tiny_model_dir, "pku", [words])
    assert "天安门广场" in segmenter.user_dictionary and segmenter.standard.name == "pku"
    with TestClient(create_app(segmenter)) as test_client:
        assert "天安门广场" in test_client.post("/segment", json={"texts": ["我爱天安门广场"]}).json()["words"][0]
    assert main(["serve", "-u", str(tmp_path / "missing.txt")]) == 2
    assert "missing.txt: no such file" in capsys.readouterr().err
    assert main(["serve", "--port", "70000"]) == 2
    assert "--port must be in 0-65535" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["serve", "--workers", "0"])
