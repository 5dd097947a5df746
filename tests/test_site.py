"""The whole site builds with Sphinx warnings as errors, and its key pages exist.

The build (conftest.py's session fixture `site_build`) runs the README's build command,
`python -m tools.site`: `jupyter-book build <repo> -W -n --keep-going --all`, which executes every
chapter notebook once more (into an emptied execution cache), then the Chinese site, from the same
cache, into `_build/html/zh/`. It builds into the default `_build/` folder, once per pytest run;
test_site_content.py, test_site_zh.py, test_browser.py and test_student.py read the same build.

Deselect with `pytest -m "not site"`.
"""

from __future__ import annotations

import pytest

from conftest import HTML, SiteBuild  # the build itself is conftest.py's session fixture `site_build`


@pytest.mark.site
def test_site_builds_without_warnings(site_build: SiteBuild) -> None:
    assert site_build.returncode == 0, (
        "python -m tools.site (both languages, -W -n --keep-going) failed; last lines of its log:\n"
        + site_build.stdout[-8000:]
    )
    assert (HTML / "index.html").is_file()
    assert (HTML / "book" / "intro.html").is_file()


@pytest.mark.site
def test_references_page_lists_the_bibliography(site_build: SiteBuild) -> None:
    page = HTML / "book" / "references.html"
    assert site_build.returncode == 0, site_build.stdout[-4000:]
    assert page.is_file(), f"{page} was not built"
    text = page.read_text(encoding="utf-8")
    for name in ("Vaswani", "Attention is all you need", "Bahdanau", "Narang"):
        assert name in text, f"{name!r} not on the references page"
    # Labelled as the text cites, author-year ("[Vaswani et al., 2017]"), not alpha ("[VSP+17]").
    assert "Vaswani et al., 2017" in text, "the bibliography's labels are not author-year"
    assert "VSP+17" not in text


@pytest.mark.site
def test_intro_cites_into_the_bibliography(site_build: SiteBuild) -> None:
    assert site_build.returncode == 0, site_build.stdout[-4000:]
    text = (HTML / "book" / "intro.html").read_text(encoding="utf-8")
    # A {cite} that resolved is a link to its entry on the references page (``bibtex_cite_id``,
    # "cite-KEY": the anchors the Colab editions link to as well).
    assert "references.html#cite-vaswani2017attention" in text, "the intro's citations do not link to the bibliography"
