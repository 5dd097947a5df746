"""What the book's extensions write themselves, in each language of the site (the run-time table,
the Claims appendix); the pages' prose is translated by Sphinx from locale/ (tools/i18n.py)."""

from __future__ import annotations

NOT_MEASURED = "not measured"
WORDS = {
    "en": {
        "not measured": NOT_MEASURED, "s": "{s} s", "min": "{m} min {s:02d} s", "no GPU": "no GPU",
        "cores": "{n} CPU core{plural}, {gpu}", "Chapter": "Chapter", "Run time": "Run time",
        "Reading time": "Reading time", "minutes": "{m} min", "h min": "{h} h {m} min",
        "all chapters": "All {n} chapters", "Claim": "Claim",
        "chapter time": "About {read} to read; its code ran in {run} in the build of this site ({machine}).", "Check": "Check",
        "Measured in this build": "Measured in this build", "Held": "Held",
        "Held on seeds": "Held on seeds (range of values; the seed closest to failing)", "not swept": "not swept",
        "worst": "closest to failing: seed {seed}, {comparison}, margin {margin}",
        "no sweep entry": "no sweep entry",
        "no claims": "This build executed no notebook, so it checked no claim.",
        "Claims caption": "Claims ({n}): the findings of the chapters' experiments",
        "Checks caption": "Checks ({n}): identities and integrity checks, whose outcome is known before the run",
        "summary": "In the build that made this site, {held} of {total} claims held, and {checks_held} of {checks}"
        " checks (identities and integrity checks, counted apart), in {pages} pages.",
        "sweep": " Over the seed sweep ({seeds} seeds per page, run with ",
        "sweep end": "), {held} of the {total} claims and checks of the swept pages held on every seed.",
    },
    "zh_CN": {
        "not measured": "未测量", "s": "{s} 秒", "min": "{m} 分 {s:02d} 秒", "no GPU": "无 GPU",
        "cores": "{n} 个 CPU 核心，{gpu}", "Chapter": "章", "Run time": "运行时间",
        "Reading time": "阅读时间", "minutes": "{m} 分钟", "h min": "{h} 小时 {m} 分钟",
        "all chapters": "全部 {n} 章", "Claim": "论断",
        "chapter time": "阅读约需 {read}；在生成本站的构建中，本章代码运行了 {run}（{machine}）。", "Check": "核验",
        "Measured in this build": "本次构建的测量值", "Held": "成立",
        "Held on seeds": "成立的种子数（取值范围；最接近不成立的种子）", "not swept": "未扫描", "no sweep entry": "无扫描记录",
        "worst": "最接近不成立：种子 {seed}，{comparison}，余量 {margin}",
        "no claims": "本次构建没有执行任何笔记本，因此没有检验任何论断。",
        "Claims caption": "论断（{n}）：各章实验的发现",
        "Checks caption": "核验（{n}）：恒等式与完整性检查，其结果在运行之前即已确定",
        "summary": "在生成本站的构建中，{total} 条论断中有 {held} 条成立，{checks} 项核验（恒等式与完整性检查，"
        "单独计数）中有 {checks_held} 项成立，共 {pages} 个页面。",
        "sweep": "在多种子扫描中（每页 {seeds} 个种子，用 ",
        "sweep end": " 运行），被扫描页面的 {total} 条论断与核验中，有 {held} 条在每个种子上都成立。",
    },
}  # fmt: skip


def words(config) -> dict[str, str]:
    """`WORDS` in the build's language (English for any language the site has no words for)."""
    return WORDS.get(getattr(config, "language", None) or "en", WORDS["en"])
