"""The explorers in a real browser, with the network off: each responds to its controls with the run's
numbers, by pointer and by keyboard, logs no error and loads nothing.

Each explorer of tests/book/test_explorers.py's examples is opened as a page of its own (a `file://` page,
as a reader's saved notebook) and inside a sandboxed `<iframe srcdoc>` that may run scripts and
nothing else, which is how Colab and JupyterLab show an HTML output. The built site's explorers are
tried in tests/test_browser.py.
"""

from __future__ import annotations

import html
import json
import math
import re
from pathlib import Path

import pytest
import torch
from explorer_controls import operate
from test_explorers import examples, hostile_examples

import lib
from conftest import REPO, skip_or_fail
from tools.browser import CHROMIUM, DRIVER, find_executable

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def browser():
    from tools.browser import chromium

    if find_executable(CHROMIUM) is None or find_executable(DRIVER) is None:
        skip_or_fail("no headless browser: apt-get install -y chromium chromium-driver")
    with chromium(1280, 900) as driver:
        driver.execute_cdp_cmd("Network.enable", {})
        offline = {"offline": True, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1}
        driver.execute_cdp_cmd("Network.emulateNetworkConditions", offline)
        yield driver


@pytest.fixture(scope="module")
def pages(tmp_path_factory) -> dict[str, str]:
    """name -> the URL of a page holding that explorer alone."""
    folder = tmp_path_factory.mktemp("explorers")
    urls = {}
    for name, explorer in examples().items():
        page = folder / f"{name}.html"
        page.write_text(f"<!doctype html><meta charset='utf-8'><title>{name}</title>{explorer.html}")
        urls[name] = page.as_uri()
    return urls


def data_of(name: str) -> dict:
    found = re.search(r'class="data">(.*?)</script>', examples()[name].html, re.S)
    return json.loads(found.group(1).replace("<\\/", "</"))


def open_page(browser, url: str):
    from selenium.webdriver.common.by import By

    browser.get(url)
    browser.execute_script("console.clear && console.clear()")
    return browser.find_element(By.CSS_SELECTOR, "[data-explorer]")


def attribute(root, name: str) -> float:
    return float(root.get_attribute(f"data-{name}"))


def errors_and_loads(browser) -> tuple[list, list]:
    errors = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    loads = browser.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")
    return errors, loads


def test_pointing_at_a_query_shows_its_weights_and_output(browser, pages) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    root = open_page(browser, pages["lookup"])
    data = data_of("lookup")
    for i in range(data["Q"]):
        label = root.find_element(By.CSS_SELECTOR, f'text.row-label[data-index="{i}"]')
        ActionChains(browser).move_to_element(label).perform()
        weights = [data["w"][i * data["K"] + j] / 1000 for j in range(data["K"])]
        assert attribute(root, "row") == i
        assert attribute(root, "sum") == pytest.approx(1.0, abs=0.01)  # a softmax row
        assert attribute(root, "output") == pytest.approx(sum(w * v for w, v in zip(weights, data["values"])))
        bars = root.find_elements(By.CSS_SELECTOR, "rect.bar")
        assert [float(b.get_attribute("height")) for b in bars] == pytest.approx(
            [data["barh"] * w for w in weights], abs=0.01
        )
        assert [float(b.get_attribute("data-weight")) for b in bars] == pytest.approx(weights, abs=5e-4)
        assert json.loads(root.get_attribute("data-weights")) == pytest.approx(weights)
        assert [t.get_attribute("aria-current") for t in root.find_elements(By.CSS_SELECTOR, "text.row-label")] == [
            str(k == i).lower() for k in range(data["Q"])
        ]
    assert "output o = Σ αⱼ vⱼ = 20.00" in root.find_element(By.CLASS_NAME, "explorer-readout").text  # the q = 0 row
    assert errors_and_loads(browser) == ([], [])


def test_the_keyboard_moves_between_queries(browser, pages) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    root = open_page(browser, pages["lookup"])
    first = root.find_element(By.CSS_SELECTOR, 'text.row-label[data-index="0"]')
    browser.execute_script("arguments[0].focus()", first)
    first.send_keys(Keys.ARROW_DOWN)
    assert attribute(root, "row") == 1
    assert browser.switch_to.active_element.get_attribute("data-index") == "1"
    browser.switch_to.active_element.send_keys(Keys.END)
    assert attribute(root, "row") == 2


def test_menus_switch_the_view_and_its_labels(browser, pages) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    from lib.book.explorers import blues

    root = open_page(browser, pages["heads"])
    data = data_of("heads")
    sentence, head = (Select(s) for s in root.find_elements(By.TAG_NAME, "select"))
    sentence.select_by_index(1)
    head.select_by_index(2)
    view = 1 * 3 + 2
    assert attribute(root, "view") == view
    assert [t.text for t in root.find_elements(By.CSS_SELECTOR, "text.row-label")] == list("vwxyz")
    assert "(sentence two, head 2): most weight on" in root.find_element(By.CLASS_NAME, "explorer-readout").text
    for cell in root.find_elements(By.CSS_SELECTOR, "rect.cell")[:7]:
        i, j = int(cell.get_attribute("data-row")), int(cell.get_attribute("data-col"))
        assert cell.get_attribute("fill") == blues(data["w"][(view * 5 + i) * 5 + j] / 1000 / data["vmax"])
    assert errors_and_loads(browser) == ([], [])


def test_mask_checkboxes_give_each_masks_count(browser, pages) -> None:
    from selenium.webdriver.common.by import By

    root = open_page(browser, pages["masks"])
    data = data_of("masks")
    look, pad = root.find_elements(By.CSS_SELECTOR, "input[type=checkbox]")
    for use_look, use_pad in [(True, True), (False, True), (False, False), (True, False)]:
        for box, wanted in ((look, use_look), (pad, use_pad)):
            if box.is_selected() != wanted:
                box.click()
        allowed = sum((not use_look or data["look"][i][j]) and (not use_pad or data["pad"][i][j])
                      for i in range(data["T"]) for j in range(data["T"]))  # fmt: skip
        assert attribute(root, "allowed") == allowed
    assert errors_and_loads(browser) == ([], [])


def test_the_d_k_slider_shows_both_softmaxes(browser, pages) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    root = open_page(browser, pages["saturation"])
    data = data_of("saturation")
    slider = root.find_element(By.CSS_SELECTOR, "input[type=range]")
    assert attribute(root, "dk") == data["d_ks"][-1]  # it starts at the widest
    slider.send_keys(Keys.HOME)
    for n, d_k in enumerate(data["d_ks"]):
        assert attribute(root, "dk") == d_k
        assert attribute(root, "scaled-max") == pytest.approx(data["scaled"]["max"][n])
        assert attribute(root, "unscaled-max") == pytest.approx(data["unscaled"]["max"][n])
        tallest = max(float(b.get_attribute("height")) for b in root.find_elements(By.CSS_SELECTOR, "rect.unscaled"))
        assert tallest == pytest.approx(data["plot_h"] * data["unscaled"]["w"][n][0], abs=0.01)
        slider.send_keys(Keys.ARROW_RIGHT)
    assert errors_and_loads(browser) == ([], [])


def test_the_offset_slider_reads_the_curve(browser, pages) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import Select

    root = open_page(browser, pages["positions"])
    data = data_of("positions")
    Select(root.find_element(By.TAG_NAME, "select")).select_by_index(1)
    root.find_element(By.CSS_SELECTOR, "input[type=range]").send_keys(Keys.ARROW_RIGHT * 2)
    assert root.get_attribute("data-kind") == "b"
    assert attribute(root, "offset") == 2
    assert attribute(root, "value") == pytest.approx(data["ys"]["b"][2])
    assert errors_and_loads(browser) == ([], [])


def test_the_step_slider_adds_up_log_probabilities(browser, pages) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    root = open_page(browser, pages["decoding"])
    root.find_element(By.CSS_SELECTOR, "input[type=range]").send_keys(Keys.ARROW_RIGHT)
    assert attribute(root, "step") == 2
    assert attribute(root, "logp0") == pytest.approx(2 * math.log(0.75))  # greedy: two steps
    assert attribute(root, "logp1") == pytest.approx(math.log(0.75))  # beam ended after one
    assert "(ended)" in root.text
    assert errors_and_loads(browser) == ([], [])


@pytest.mark.parametrize("name", list(examples()))
def test_an_explorer_works_in_a_sandboxed_frame_as_in_colab(browser, tmp_path: Path, name: str) -> None:
    """Colab and JupyterLab show an HTML output in a frame of its own: scripts run, nothing else."""
    from selenium.webdriver.common.by import By

    frame = f'<iframe sandbox="allow-scripts" style="width:900px;height:900px" srcdoc="{html.escape(examples()[name].html)}">'
    page = tmp_path / "frame.html"
    page.write_text(f"<!doctype html><meta charset='utf-8'>{frame}</iframe>")
    browser.get(page.as_uri())
    browser.switch_to.frame(browser.find_element(By.TAG_NAME, "iframe"))
    try:
        root = browser.find_element(By.CSS_SELECTOR, "[data-explorer]")
        assert root.get_attribute("data-ready") == "1"  # its script ran
        before = root.find_element(By.CLASS_NAME, "explorer-readout").text
        operate(browser, root)
        assert root.find_element(By.CLASS_NAME, "explorer-readout").text != before
    finally:
        browser.switch_to.default_content()
    assert [e for e in browser.get_log("browser") if e["level"] == "SEVERE"] == []


def test_print_shows_the_figure_without_the_controls(browser, pages) -> None:
    """On paper (print media) the figure stays, in its first state, and the controls go."""
    from selenium.webdriver.common.by import By

    root = open_page(browser, pages["heads"])
    browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "print"})
    try:
        assert not root.find_element(By.CLASS_NAME, "explorer-controls").is_displayed()
        assert root.find_element(By.TAG_NAME, "svg").is_displayed()
    finally:
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": ""})


def test_hostile_labels_leave_the_explorer_and_the_page_after_it_working(browser, tmp_path: Path) -> None:
    """An explorer whose labels say ``<!--<script>``, ``</script>`` or carry script in quotes and attributes:
    its script still runs and responds, the element after it on the page is still there, and nothing the
    labels say runs (nothing sets ``data-pwned``)."""
    from selenium.webdriver.common.by import By

    body = "".join(
        f'{explorer.html}<p class="after" id="after-{kind}">after</p>' for kind, explorer in hostile_examples().items()
    )
    page = tmp_path / "hostile.html"
    page.write_text(f"<!doctype html><meta charset='utf-8'><title>hostile</title>{body}<p id='end'>end</p>")
    browser.get(page.as_uri())
    assert browser.find_elements(By.ID, "end"), "the end of the page vanished"
    for kind, explorer in hostile_examples().items():
        assert browser.find_elements(By.ID, f"after-{kind}"), f"the element after the {kind} explorer vanished"
        root = browser.find_element(By.ID, explorer.id)
        assert root.get_attribute("data-ready") == "1", f"the {kind} explorer's script did not run"
        before = root.find_element(By.CLASS_NAME, "explorer-readout").text
        operate(browser, root)
        assert root.find_element(By.CLASS_NAME, "explorer-readout").text != before, kind
    assert browser.execute_script("return document.querySelectorAll('[data-pwned], img').length") == 0
    assert errors_and_loads(browser) == ([], [])


# Runs in the page: each text of an explorer's figure that reaches past the figure's edges (it is cut off).
_CUT_OFF_WORDS = r"""
const cut = [];
for (const ex of document.querySelectorAll('[data-explorer]')) {
  const svg = ex.querySelector('svg').getBoundingClientRect();
  for (const t of ex.querySelectorAll('svg text')) {
    const r = t.getBoundingClientRect();
    if (r.width && (r.right > svg.right + 0.5 || r.left < svg.left - 0.5))
      cut.push(`${ex.id}: “${t.textContent}” ${(r.right - svg.right).toFixed(1)} px past the right edge`);
  }
}
return cut;
"""


def test_on_a_phone_every_row_can_be_tapped_and_no_word_is_cut_off(tmp_path: Path) -> None:
    """Issue 64, at 390 px with the book's style sheet (an explorer shrinks to 91 %, then scrolls): every
    control and every row of every explorer is a target of 24 x 24 px or more (rows of 10 to 13 px
    before; chapter 10's cloze explorer, 12 people by 20 cities, is the largest), and no word of a figure
    runs past its edge, in English or in Chinese (the Chinese hint of chapter 2's lookup explorer did)."""
    from explorer_controls import small_targets

    from lib.book.explorers import redraw
    from lib.book.explorers.words import WORDS
    from tools.browser import chromium

    if find_executable(CHROMIUM) is None or find_executable(DRIVER) is None:
        skip_or_fail("no headless browser: apt-get install -y chromium chromium-driver")
    zh = {WORDS["attention.hint"]: "指向一个{row}（一行），查看它在各个{column}上的权重。",
          WORDS["attention.bars"]: "该{row}在各个{column}上的权重", "query": "查询", "key": "键"}  # fmt: skip
    cloze = lib.attention_explorer(torch.rand(2, 12, 20, generator=torch.Generator().manual_seed(0)),
                                   [f"Pubo {i} (Oslo)" for i in range(12)], [f"Kyoto {j}" for j in range(20)],
                                   selectors=[("model", ["before", "after"])], name="cloze")  # fmt: skip
    shown = {**examples(), "cloze": cloze}
    shown |= {f"{name}-zh": redraw(shown[name].call, zh) for name in ("lookup", "heads", "cloze")}
    css = (REPO / "_static" / "book.css").read_text(encoding="utf-8")
    body = "".join(f"<div style='margin:0 0 2em'>{explorer.html}</div>" for explorer in shown.values())
    page = tmp_path / "phone.html"
    page.write_text("<!doctype html><meta charset='utf-8'><meta name='viewport' content='width=device-width'>"
                    f"<style>{css}</style><div style='width:358px;margin:0 16px'>{body}</div>")  # fmt: skip
    with chromium(390, 844) as phone:
        phone.get(page.as_uri())
        assert phone.execute_script("return window.innerWidth") == 390
        assert small_targets(phone) == []
        assert phone.execute_script(_CUT_OFF_WORDS) == []
