"""The Chinese edition's catalogs (locale/zh_CN): complete, faithful to the English, one term per concept.

- every page of `_toc.yml` has a catalog, and the claim statements (of the seed sweep and of the pages
  it does not sweep) have theirs;
- every value of every claim the pages show has a plain label in `lib/book/claim_labels.json`, and
  every label and unit there its translation in `claim-values.po`;
- no message is untranslated or fuzzy: an English edit is not done until its Chinese is;
- each translation keeps its English's roles, math, inline code and links, and a numbered heading
  keeps its number (``3\\. ``);
- the glossary (`locale/glossary.yml`) holds: an English term's message uses its one Chinese term,
  and each page gives the English once beside it;
- the catalogs hold exactly the messages the English sources have now (no stale catalog).

The checks are `tools.i18n_checks`'s (`python -m tools.i18n check`), which a translator runs while working; here they
run on every catalog.
"""

from __future__ import annotations

import json

import pytest
from babel.messages.catalog import Message

from tools.common import REPO, toc_docnames
from tools.i18n import claim_statements, claim_value_names, unswept_claims, unswept_statements
from tools.i18n_catalogs import CATALOGS, STATEMENTS_DOMAIN, VALUES_DOMAIN, catalogs, messages, read_catalog
from tools.i18n_checks import forbidden, glossary, markup, message_problems, page_problems

PAGES = toc_docnames()
TERMS = glossary()
BANNED = forbidden()


def test_every_page_and_the_claim_statements_have_a_catalog() -> None:
    have = {p.relative_to(CATALOGS).with_suffix("").as_posix() for p in catalogs()}
    assert set(PAGES) | {STATEMENTS_DOMAIN, VALUES_DOMAIN} <= have, sorted(set(PAGES) - have)


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
    ledger = json.loads((REPO / "book" / "claims_sweep.json").read_text(encoding="utf-8"))
    del ledger["chapters"]["performance"]  # as if the Performance appendix were not swept
    found = unswept_statements(ledger)
    assert "performance.ipynb" in found and "03_scaling.ipynb" not in found
    assert any(s.startswith("five seeds trained in one pass") for s in found["performance.ipynb"])


def test_every_value_of_every_claim_shown_has_a_label_in_english_and_chinese() -> None:
    """Issue 64, item 2: the boxes show each measured value under a plain label with its unit, never
    under the name of the code. Every statement the pages show (the ledger's and the unswept pages')
    has, for each value it records, a label in `lib/book/claim_labels.json`, not its variable name, and
    every label and unit has its Chinese in `claim-values.po`, translated and not fuzzy."""
    from lib.book.claim_labels import value_labels

    names = claim_value_names()
    assert set(claim_statements()) <= set(names)
    missing = {s: [n for n in recorded if n not in value_labels(s)] for s, recorded in names.items()}
    missing = {s: gaps for s, gaps in missing.items() if gaps}
    assert not missing, f"{len(missing)} claim(s) with values that have no label in lib/book/claim_labels.json: " + (
        "; ".join(f"{s!r}: {gaps}" for s, gaps in list(missing.items())[:10])
    )
    labels = [(s, n, value_labels(s)[n]) for s, recorded in names.items() for n in recorded]
    assert all(label.label.strip() and label.label != n for _, n, label in labels), "a label says more than the name"
    catalog = {m.id: m for m in messages(read_catalog(CATALOGS / f"{VALUES_DOMAIN}.po"))}
    words = {w for _, _, label in labels for w in (label.label, label.unit) if w}
    untranslated = sorted(w for w in words if w not in catalog or not catalog[w].string or catalog[w].fuzzy)
    assert not untranslated, f"not in claim-values.po, or untranslated: {untranslated[:10]}"


def test_the_value_names_of_an_unswept_page_are_read_from_its_code() -> None:
    ledger = json.loads((REPO / "book" / "claims_sweep.json").read_text(encoding="utf-8"))
    del ledger["chapters"]["performance"]  # as if the Performance appendix were not swept
    found = dict(unswept_claims(ledger)["performance.ipynb"])
    assert found["explicit, fused and nn.MultiheadAttention with the same weights agree to 1e-5"] == [
        "explicit_gap",
        "torch_gap",
    ]


def test_the_value_labels_template_holds_every_label_and_unit_once(tmp_path) -> None:
    from lib.book.claim_labels import labels_by_page
    from tools.i18n import write_value_labels_template

    count = write_value_labels_template(tmp_path / "claim-values.pot")
    template = [m.id for m in messages(read_catalog(tmp_path / "claim-values.pot"))]
    every = {w for claims in labels_by_page().values() for names in claims.values() for v in names.values()
             for w in (v.label, v.unit) if w}  # fmt: skip
    assert len(template) == count == len(set(template)) and set(template) == every
    kept = {m.id for m in messages(read_catalog(CATALOGS / f"{VALUES_DOMAIN}.po"))}
    assert kept == every, f"claim-values.po is stale: new {sorted(every - kept)[:3]}, gone {sorted(kept - every)[:3]}"


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
        # a rule on markup: prose() leaves ⟨⟩ where the role was (the rule read "{cite", which prose() removes)
        (
            "The lecture is {cite:p}`cs224n2024transformers`.",
            "本讲为 {cite:p}`cs224n2024transformers`。",
            "write 本讲（",
        ),
        # a term's meaning or name changed (each from the catalogs as they were at cdd4aac)
        ("no fine-tuning question names a test person", "没有哪个微调问题提到测试者", "not '测试者'"),
        ("{name} explorer", "{name} 交互图", "is '交互式探索器'"),
        ("relative error vs full", "相对完整注意力的误差", "is '相对误差'"),
        ("The check confirms it at three widths.", "检验在三个宽度上证实了这一点。", "is '核验'"),
        ("rotary embeddings from {cite:t}`su2021roformer`", "旋转嵌入出自 {cite:t}`su2021roformer`", "not '旋转嵌入'"),
        (
            "Next-token pretraining learns from every token, masked pretraining from 15 % of them",
            "下一词元预训练从每个词元中学习，屏蔽式预训练只从其中 15 % 的词元中学习",
            "not '屏蔽式'",
        ),
        (
            "after as many sentences as the decoder's whole pretraining the masked encoder was still at the level",
            "读完与解码器全部预训练一样多的句子之后，屏蔽式编码器仍停留在固定答案的水平",
            "is '掩码语言建模'",
        ),
    ],
)
def test_the_checker_finds_each_kind_of_problem(english: str, chinese: str, problem: str) -> None:
    assert any(problem in p for p in message_problems(Message(english, chinese), TERMS, BANNED))


# --- the rules widened after cdd4aac's catalogs slipped through them (issue #60); the examples that fail are
# messages, or excerpts of messages, as they were at cdd4aac ---------------------------------------------


@pytest.mark.parametrize(
    ("english", "chinese", "problem"),
    [
        # bold split the method's name: the glossary read neither "**Relative** positions" nor "**相对**位置"
        ("**Relative** positions {cite:p}`shaw2018self` do not touch the embeddings.",
         "**相对**位置 {cite:p}`shaw2018self` 不改动嵌入。", "not '相对位置'"),
        ("**Rotary** positions {cite:p}`su2021roformer` rotate instead of adding.",
         "**旋转**位置 {cite:p}`su2021roformer` 用旋转代替相加。", "is '旋转位置编码'"),
        ("**Learned** absolute positions are the simplest: a table `nn.Embedding(max_len, d)`.",
         "**可学习的**绝对位置最简单：一张表 `nn.Embedding(max_len, d)`。", "is '可学习位置编码'"),
        # a term bolded in part
        ("**Relative positions** do not touch the embeddings.", "**相对**位置编码不改动嵌入。",
         "emphasis inside the term '相对位置编码'"),
    ],
)  # fmt: skip
def test_emphasis_inside_a_term_is_read_through(english: str, chinese: str, problem: str) -> None:
    assert any(problem in p for p in message_problems(Message(english, chinese), TERMS, BANNED))


def test_positions_of_markup_are_the_method() -> None:
    """'the relative position of two tokens' is the plain sense (相对位置); 'the relative positions of
    {doc}`06_position`' are chapter 6's method (相对位置编码): an 'of' followed by markup, not a word."""
    english = "the explicit path (the relative positions of {doc}`06_position` use the same factor)"
    at_cdd4aac = "显式路径，{doc}`06_position` 中的相对位置（relative positions）也使用同一个因子"
    problems = message_problems(Message(english, at_cdd4aac), TERMS, BANNED)
    assert any("is '相对位置编码', not '相对位置'" in p for p in problems), problems
    fixed = "显式路径，{doc}`06_position` 中的相对位置编码（relative positions）也使用同一个因子"
    assert message_problems(Message(english, fixed), TERMS, BANNED) == []
    assert message_problems(Message("the relative position of two tokens", "两个词元的相对位置"), TERMS, BANNED) == []


@pytest.mark.parametrize(
    ("english", "chinese"),
    [
        ("at d_k=1024 the unscaled Jacobian is > 1000x smaller", "d_k=1024 时，未缩放的雅可比矩阵小 > 1000x"),
        ("at d_k=1024 the gradient reaching q is > 100x smaller", "d_k=1024 时，到达 q 的梯度小 > 100x"),
        ("untrained LSTM: > 1e4x smaller at distance 31", "未训练的 LSTM：在距离 31 处小了 > 1e4x"),
        (
            "large scores (medians): > 2x as peaked, hull shrinks > 100x less",
            "大分数（取中位数）：权重尖锐程度是小分数的 > 2x，凸包的收缩比小分数少 > 100x",
        ),
        (
            "memory-efficient attention's peak memory grows as T (slope within 0.1 of 1), at least 5x less than "
            "full attention's at T = 2048",
            "内存高效注意力的峰值内存按 T 增长（斜率与 1 相差在 0.1 以内），T = 2048 时至少比完整注意力少 5x",
        ),
        (
            "an unscaled model can represent exactly the same functions as a scaled one, by learning a $W_Q$ that "
            "is $\\sqrt{d_k}$ times smaller.",
            "未缩放的模型只要学到一个小 $\\sqrt{d_k}$ 倍的 $W_Q$，就能表示与缩放模型完全相同的函数。",
        ),
        (
            "so little gradient reaches $q$ (more than a hundred times less at $d_k = 1024$)",
            "因此到达 $q$ 的梯度很少（在 $d_k = 1024$ 时少一百多倍）",
        ),
        # and "N times more": 高出 N 倍 reads as N + 1 times
        (
            "pretrained first on sentences that mention everyone, the same model answers at least three times better",
            "先在提到所有人的句子上预训练，同一个模型答对的比例至少高出三倍",
        ),
        ("attention's time grows < 4x from T=16 to 128 (T grew 8x)", "注意力的耗时增长 < 4x（T 增长了 8x）"),
    ],
)
def test_n_times_smaller_or_more_is_found_in_any_notation(english: str, chinese: str) -> None:
    """小 N 倍 was the only form the check knew; 小 > 1000x, 少 5x, 小 $…$ 倍 (math) and 高出三倍 slipped through."""
    problems = message_problems(Message(english, chinese), TERMS, BANNED)
    assert any("N 分之一" in p or "N + 1 times" in p for p in problems), problems


def test_a_multiple_said_the_right_way_round_passes() -> None:
    for english, chinese in [
        ("each at least 2x faster than full attention", "每一种的速度都至少是完整注意力的 2 倍"),
        ("more than three times as often as lower", "次数超过更低情况的三倍"),
        ("> 2x as peaked", "权重尖锐程度是小分数的 > 2x"),
        ("at d_k=1024 the unscaled Jacobian is > 1000x smaller", "d_k=1024 时，缩放后的雅可比矩阵是未缩放的 > 1000x"),
        ("a $W_Q$ that is $\\sqrt{d_k}$ times smaller", "一个只有缩放模型的 $\\sqrt{d_k}$ 分之一的 $W_Q$"),
    ]:
        assert message_problems(Message(english, chinese), TERMS, BANNED) == [], chinese


@pytest.mark.parametrize(
    ("english", "chinese", "verb"),
    [
        (
            "A batch of targets of different lengths also needs a **padding mask**, which hides the `<pad>` keys.",
            "长度不一的一批目标序列还需要**填充掩码**，它把 `<pad>` 键遮住。",
            "遮住",
        ),
        ("but the masked scores are still computed and thrown away", "但被掩码遮蔽的分数仍会先算出来再丢弃", "遮蔽"),
        (
            "which lets the kernel skip the masked upper triangle instead of computing it and throwing it away:",
            "这样内核就能跳过被掩码遮住的上三角，而不必先算出来再扔掉：",
            "遮住",
        ),
    ],
)
def test_the_verb_mask_is_one_word(english: str, chinese: str, verb: str) -> None:
    """屏蔽, the notes' verb: not 遮住 (chapter 5, Performance) or 遮蔽 (chapter 8), whatever the English."""
    problems = message_problems(Message(english, chinese), TERMS, BANNED)
    assert any(f"not '{verb}'" in p and "屏蔽" in p for p in problems), problems
    assert (
        message_problems(Message(english, chinese.replace("掩码" + verb, "屏蔽").replace(verb, "屏蔽")), TERMS, BANNED)
        == []
    )


@pytest.mark.parametrize(
    ("english", "chinese", "problem"),
    [
        (
            "With 20,000 samples the sampling error is about 1–2%.",
            "用 20000 个样本，抽样误差约为 1–2%。",
            "write 20,000 as the English does, not 20000",
        ),
        (
            "It does this for 2,000 random attention problems.",
            "它对 2000 个随机注意力问题进行测量。",
            "write 2,000 as the English does",
        ),
        (
            'the paper only says its shared vocabulary has "about 37000" tokens',
            "而论文只说共享词表有“大约 37000 个”词元",
            "the English writes 37000",
        ),
        ("($n_\\text{vocab}$ = 50257, $d$ = 768)", "（$n_\\text{vocab}$ = 50257，$d$ = 768）", "writes 50257"),
    ],
)
def test_one_number_style(english: str, chinese: str, problem: str) -> None:
    """A number is written as the English writes it, and none of five digits or more without separators."""
    assert any(problem in p for p in message_problems(Message(english, chinese), TERMS, BANNED))


def test_numbers_as_the_english_writes_them_pass() -> None:
    for english, chinese in [
        ("6,400 sentences, at T = 1024 and 2048", "6,400 个句子，在 T = 1024 和 2048 时"),
        ("every 1000 tokens, $p = 10000$", "每 1000 个词元，$p = 10000$"),  # math is not prose
    ]:
        assert message_problems(Message(english, chinese), TERMS, BANNED) == [], chinese


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
    from tools.i18n_checks import syntax_problems

    po = tmp_path / "page.po"
    po.write_text('msgid ""\nmsgstr ""\n\nmsgid "Hello"\nmsgstr ""你好""\n\nmsgid "a"\nmsgstr "甲"\n', encoding="utf-8")
    assert syntax_problems(po) == ['page:5: not one quoted string: \'msgstr ""你好""\'']
    po.write_text('msgid ""\nmsgstr ""\n\nmsgid "Hello"\nmsgstr "你好"\n', encoding="utf-8")
    assert syntax_problems(po) == []


def test_the_chinese_search_index_is_sphinxs() -> None:
    """tools/i18n_ext/build_speed.py's SearchChinese keeps the Latin terms in a set (Sphinx's list made the
    Chinese index quadratic in the book's length); it splits and stems every word as Sphinx's does."""
    from sphinx.search import zh as search_zh

    from tools.i18n_ext.build_speed import SearchChinese

    text = "多头注意力 (multi-head attention) 把 d_model 分成 H 个头; the heads attend, GPU, RoPE 位置编码。"
    ours, sphinxs = SearchChinese({}), search_zh.SearchChinese({})
    sphinxs.latin_terms = []  # Sphinx's list lives on the class: a fresh one for this test
    words = ours.split(text)
    assert words == sphinxs.split(text) and "注意力" in words
    assert isinstance(ours.latin_terms, set) and ours.latin_terms == set(sphinxs.latin_terms)
    assert [ours.stem(word) for word in words] == [sphinxs.stem(word) for word in words]
