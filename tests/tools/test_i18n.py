"""The Chinese edition's catalogs (locale/zh_CN): complete, faithful to the English, one term per concept.

- every page of `_toc.yml` has a catalog, and the claim statements (of the seed sweep and of the pages
  it does not sweep) have theirs;
- no message is untranslated or fuzzy: an English edit is not done until its Chinese is;
- each translation keeps its English's roles, math, inline code and links, and a numbered heading
  keeps its number (``3\\. ``);
- the glossary (`locale/glossary.yml`) holds: an English term's message uses its one Chinese term,
  and each page gives the English once beside it;
- the catalogs hold exactly the messages the English sources have now (no stale catalog).

The checks are `tools.i18n`'s, which a translator runs while working; here they run on every catalog.
"""

from __future__ import annotations

import json

import pytest
from babel.messages.catalog import Message

from tools.common import REPO, toc_docnames
from tools.i18n import (
    CATALOGS,
    STATEMENTS_DOMAIN,
    catalogs,
    claim_statements,
    forbidden,
    glossary,
    markup,
    message_problems,
    messages,
    page_problems,
    read_catalog,
    unswept_statements,
)

PAGES = toc_docnames()
TERMS = glossary()
BANNED = forbidden()


def test_every_page_and_the_claim_statements_have_a_catalog() -> None:
    have = {p.relative_to(CATALOGS).with_suffix("").as_posix() for p in catalogs()}
    assert set(PAGES) | {STATEMENTS_DOMAIN} <= have, sorted(set(PAGES) - have)


@pytest.mark.parametrize("path", catalogs(), ids=lambda p: p.relative_to(CATALOGS).with_suffix("").as_posix())
def test_every_message_is_translated_and_checked(path) -> None:
    problems = page_problems(path, TERMS)
    assert not problems, (
        f"{len(problems)} problem(s); `python -m tools.i18n check {path.relative_to(REPO)}`:\n"
        + "\n".join(problems[:40])
    )


def test_the_claim_statements_are_those_of_the_ledger_and_of_the_unswept_pages() -> None:
    """The statements catalog holds every statement of the seed sweep and of the pages it does not
    sweep (the claims the pages show)."""
    ledger = json.loads((REPO / "book" / "claims_sweep.json").read_text(encoding="utf-8"))
    statements = {c["statement"] for entry in ledger["chapters"].values() for c in entry.get("claims", [])}
    assert statements <= set(claim_statements())
    catalog = {m.id for m in messages(read_catalog(CATALOGS / f"{STATEMENTS_DOMAIN}.po"))}
    assert set(claim_statements()) - catalog == set(), "run `python -m tools.i18n extract`, then translate"


def test_the_statements_of_an_unswept_page_are_read_from_its_code() -> None:
    found = unswept_statements(json.loads((REPO / "book" / "claims_sweep.json").read_text(encoding="utf-8")))
    assert "performance.ipynb" in found and "03_scaling.ipynb" not in found
    assert any(s.startswith("five seeds trained in one pass") for s in found["performance.ipynb"])


@pytest.mark.slow
def test_the_catalogs_hold_the_messages_the_english_has_now(tmp_path) -> None:
    """A fresh extraction (a gettext build, ~20 s) finds no message the catalogs lack, and the
    catalogs keep none it does not find: after an English edit, `python -m tools.i18n extract`."""
    import subprocess
    import sys

    subprocess.run(
        [sys.executable, "-m", "tools.site", "--gettext", "--out", str(tmp_path)],
        cwd=REPO,
        check=True,
        capture_output=True,
    )
    for template in sorted(tmp_path.rglob("*.pot")):
        page = template.relative_to(tmp_path).with_suffix("").as_posix()
        fresh = {m.id for m in messages(read_catalog(template))}
        kept = {m.id for m in messages(read_catalog(CATALOGS / f"{page}.po"))}
        assert fresh == kept, (
            f"{page}: the catalog is stale; `python -m tools.i18n extract` then translate: "
            f"new {sorted(fresh - kept)[:3]}, gone {sorted(kept - fresh)[:3]}"
        )


def test_the_glossary_has_one_chinese_term_per_english_term() -> None:
    english = [t.en for t in TERMS]
    chinese = [t.zh for t in TERMS]
    assert len(set(english)) == len(english)
    assert len(set(chinese)) == len(chinese)


def test_every_term_says_where_it_comes_from() -> None:
    assert {t.source for t in TERMS} <= {"notes", "d2l-zh", "book"} and all(t.source for t in TERMS)
    assert all(t.note for t in TERMS if t.source == "book"), "a choice of the book's own says why"


# --- the checker itself, on small examples ------------------------------------------------------------


def test_markup_lists_roles_math_code_and_links() -> None:
    text = "See {cite:p}`vaswani2017` and $\\sqrt{d_k}$, `lib.claim(x)`, $$a$$ at https://x.org/a."
    assert markup(text) == sorted(
        ["{cite:p}`vaswani2017`", "$\\sqrt{d_k}$", "`lib.claim(x)`", "$$a$$", "https://x.org/a."]
    )


@pytest.mark.parametrize(
    ("english", "chinese", "problem"),
    [
        ("Self-attention, $x$.", "", "untranslated"),
        ("Self-attention, $x$.", "自注意力，$y$。", "markup differs"),
        ("Self-attention {doc}`02_self_attention`.", "自注意力。", "markup differs"),
        ("3. Scaling and variance", "3. 缩放与方差", "numbered heading"),
        ("Multi-head attention", "多个头的注意力", "glossary"),
        # a variant of a term that a reader met for the same concept
        ("Sinusoidal positions extrapolate.", "正弦位置编码可以外推，正弦位置也可以。", "not '正弦位置'"),
        ("As the lecture shows, it works.", "如本讲所示，讲座也这样说。", "not '讲座'"),
        ("The hidden state", "隐藏状态（hidden state）", "is '隐状态'"),
        ("Open the notebook on your laptop.", "在笔记本电脑上打开笔记本。", "not '笔记本电脑'"),
        ("We mask the future.", "我们对未来做掩码。", "not '做掩码'"),
        # what no Chinese prose may hold, whatever the English says
        ("Vaswani et al. show it.", "Vaswani et al. 表明了这一点。", "write 等人"),
        ("Autograd gives it.", "Autograd 给出了它。", "write 自动微分"),
        ("It is 5 times smaller.", "它小 5 倍。", "不到"),
        ("Print it.", "列印它。", "write 打印"),
    ],
)
def test_the_checker_finds_each_kind_of_problem(english: str, chinese: str, problem: str) -> None:
    assert any(problem in p for p in message_problems(Message(english, chinese), TERMS, BANNED))


def test_the_plain_sense_of_a_term_is_not_held_to_its_technical_one() -> None:
    """'the relative position of two tokens' is 相对位置 (not the method); code keeps its English."""
    for english, chinese in [
        ("the relative position of two tokens", "两个词元的相对位置"),
        ("Run `notebook.ipynb`.", "运行 `notebook.ipynb`。"),
        ("a warm-up for the final project", "为期末项目准备的热身练习"),
        ("{token} looks at {count} keys", "{token} 看向 {count} 个键"),  # an explorer's template fields
    ]:
        assert message_problems(Message(english, chinese), TERMS, BANNED) == [], english


def test_the_checker_accepts_a_faithful_translation() -> None:
    english = "3. Self-attention in {cite:t}`vaswani2017`: $\\operatorname{softmax}(q k^\\top)$ with `lib.attention`"
    chinese = "3\\. {cite:t}`vaswani2017` 的自注意力：`lib.attention` 中的 $\\operatorname{softmax}(q k^\\top)$"
    assert message_problems(Message(english, chinese), TERMS) == []


def test_a_catalog_line_that_is_not_one_quoted_string_is_a_problem(tmp_path) -> None:
    """babel reads ``msgstr ""text""`` without complaint (keeping the quotes); the check does not."""
    from tools.i18n import syntax_problems

    po = tmp_path / "page.po"
    po.write_text('msgid ""\nmsgstr ""\n\nmsgid "Hello"\nmsgstr ""你好""\n\nmsgid "a"\nmsgstr "甲"\n', encoding="utf-8")
    assert syntax_problems(po) == ['page:5: not one quoted string: \'msgstr ""你好""\'']
    po.write_text('msgid ""\nmsgstr ""\n\nmsgid "Hello"\nmsgstr "你好"\n', encoding="utf-8")
    assert syntax_problems(po) == []


def test_the_chinese_search_index_is_sphinxs() -> None:
    """tools/i18n_ext.py's SearchChinese keeps the Latin terms in a set (Sphinx's list made the
    Chinese index quadratic in the book's length); it splits and stems every word as Sphinx's does."""
    from sphinx.search import zh as search_zh

    from tools.i18n_ext import SearchChinese

    text = "多头注意力 (multi-head attention) 把 d_model 分成 H 个头; the heads attend, GPU, RoPE 位置编码。"
    ours, sphinxs = SearchChinese({}), search_zh.SearchChinese({})
    sphinxs.latin_terms = []  # Sphinx's list lives on the class: a fresh one for this test
    words = ours.split(text)
    assert words == sphinxs.split(text) and "注意力" in words
    assert isinstance(ours.latin_terms, set) and ours.latin_terms == set(sphinxs.latin_terms)
    assert [ours.stem(word) for word in words] == [sphinxs.stem(word) for word in words]
