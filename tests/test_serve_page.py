"""The page at / in a real headless browser: Chromium from the system's packages (Debian's
`chromium` and `chromium-driver`) driven by Selenium, against `segmenter serve` on a loopback port.
It types a sentence, and checks the words shown (segment()'s) and the explanation of a junction
(the heads' margin, the rule that cut it). Skipped, with the reason, where no browser, driver or
selenium is installed. SEGMENTER_SCREENSHOT=PATH saves a screenshot of the page there
(docs/serve.png was made so)."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time

import pytest

pytestmark = pytest.mark.slow

BROWSERS = ("chromium", "chromium-browser", "google-chrome")
DRIVERS = ("chromedriver",)
SENTENCE = "江泽民说，我爱北京天安门。"


def _found(names) -> str | None:
    for name in names:
        path = shutil.which(name) or (f"/usr/bin/{name}" if os.path.exists(f"/usr/bin/{name}") else None)
        if path:
            return path
    return None


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (the test extra)")
    binary, driver = _found(BROWSERS), _found(DRIVERS)
    if binary is None:
        pytest.skip("no Chromium here: apt-get install chromium chromium-driver")
    if driver is None:
        pytest.skip("no chromedriver here: apt-get install chromium-driver")
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--no-first-run", "--disable-extensions", "--window-size=1100,900",
                 f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}"):
        options.add_argument(flag)
    os.environ.setdefault("SE_AVOID_STATS", "true")
    chrome = webdriver.Chrome(service=Service(executable_path=driver), options=options)
    chrome.set_page_load_timeout(60)
    chrome.set_script_timeout(60)
    yield chrome
    chrome.quit()


@pytest.fixture(scope="module")
def server():
    pytest.importorskip("starlette", reason="the serve extra is not installed")
    process = subprocess.Popen([sys.executable, "-m", "segmenter", "serve", "--host", "127.0.0.1", "--port", "0",
                                "-q"], stderr=subprocess.PIPE, text=True)
    line = process.stderr.readline()
    found = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
    if not found:
        process.kill()
        raise AssertionError(f"the server did not start: {line}{process.stderr.read()}")
    yield f"http://127.0.0.1:{found.group(1)}/"
    process.terminate()
    assert process.wait(timeout=60) == 0


def _wait(chrome, condition, what: str, seconds: float = 60):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"the page never showed {what}: status {chrome.find_element('id', 'status').text!r}")


def _segment(chrome, text: str, standard: str) -> list[str]:
    from selenium.webdriver.support.ui import Select

    box = chrome.find_element("id", "text")
    box.clear()
    box.send_keys(text)
    Select(chrome.find_element("id", "standard")).select_by_visible_text(standard)
    chrome.execute_script("document.body.dataset.state = 'typed'")
    chrome.find_element("id", "go").click()
    _wait(chrome, lambda: chrome.execute_script("return document.body.dataset.state") == "done", "its words")
    return [w.text for w in chrome.find_elements("css selector", "#words .word")]


def test_the_page_shows_the_words_and_why(browser, server):
    from selenium.webdriver.common.action_chains import ActionChains

    from segmenter import Segmenter

    browser.get(server)
    _wait(browser, lambda: browser.find_element("id", "text").is_displayed(), "the text box")
    segmenter = Segmenter(standard="pku", processes=False)
    words = _segment(browser, SENTENCE, "pku")
    assert words == segmenter.segment(SENTENCE)  # 江 泽民 (PKU writes a surname apart)
    assert browser.find_element("id", "wordlist").text == " / ".join(words)
    assert len(browser.find_elements("css selector", "#strip .col")) == len(SENTENCE)

    # hover the junction 江|泽: cut by the rule split_surnames, the heads' numbers shown
    marker = browser.find_element("css selector", '#words .j[data-offset="1"]')
    assert "cut" in marker.get_attribute("class").split() and "rule" in marker.get_attribute("class").split()
    ActionChains(browser).move_to_element(marker).perform()
    _wait(browser, lambda: browser.find_element("id", "detail").get_attribute("data-offset") == "1", "the junction")
    detail = browser.find_element("id", "detail").text
    assert "rule split_surnames" in detail and "江 | 泽" in detail
    assert re.search(r"margin -?\d+\.\d\d", detail) and "threshold" in detail and "word decoder" in detail

    # click a junction inside a word: joined, the word table's view shown
    inside = browser.find_element("css selector", f'#words .j[data-offset="{SENTENCE.index("京")}"]')
    ActionChains(browser).click(inside).perform()
    detail = browser.find_element("id", "detail").text
    assert "joined" in detail and "北 | 京" in detail and "log p" in detail

    # the general standard writes the name whole
    assert "江泽民" in _segment(browser, SENTENCE, "general")
    screenshot = os.environ.get("SEGMENTER_SCREENSHOT")
    if screenshot:
        _segment(browser, SENTENCE, "pku")
        ActionChains(browser).click(browser.find_element("css selector", '#words .j[data-offset="1"]')).perform()
        browser.save_screenshot(screenshot)
