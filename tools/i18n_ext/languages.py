"""The site's languages: the Chinese site lives in a folder of the English one, and each links to the
other; which of them a build is."""

from __future__ import annotations

from sphinx.application import Sphinx

LANGUAGES = {"en": ("", "English", "en"), "zh_CN": ("zh/", "中文", "zh-CN")}


def language(app: Sphinx) -> str:
    return app.config.language if app.config.language in LANGUAGES else "en"
