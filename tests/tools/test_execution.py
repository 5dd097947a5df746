"""tools/execution.py and conftest.py: what goes into the execution cache, and a cache of other code refused."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import nbformat
import pytest

from conftest import REPO
from tools import execution, site
from tools.common import sweep_seconds


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    """An execution cache and its stamp in a folder of the test's own."""
    monkeypatch.setattr(execution, "CACHE", tmp_path / ".jupyter_cache")
    monkeypatch.setattr(execution, "STAMP", tmp_path / ".jupyter_cache.stamp.json")
    execution.CACHE.mkdir()
    return execution.CACHE


def test_the_stamp_covers_lib_and_the_requirements(tmp_path) -> None:
    (tmp_path / "lib" / "__pycache__").mkdir(parents=True)
    (tmp_path / "lib" / "model.py").write_text("x = 1\n")
    (tmp_path / "requirements.txt").write_text("torch==2.13.0\n")
    (tmp_path / "pyproject.toml").write_text("[project]\n")
    first = execution.code_stamp(tmp_path)
    (tmp_path / "lib" / "__pycache__" / "model.cpython-311.pyc").write_bytes(b"\0")
    assert execution.code_stamp(tmp_path) == first, "compiled files are no code of their own"
    (tmp_path / "lib" / "model.py").write_text("x = 2\n")
    assert execution.code_stamp(tmp_path) != first
    (tmp_path / "lib" / "model.py").write_text("x = 1\n")
    (tmp_path / "requirements.txt").write_text("torch==2.14.1\n")
    assert execution.code_stamp(tmp_path) != first


@pytest.mark.parametrize(
    "argv", [["--language", "zh_CN"], ["--language", "en"], ["--keep-cache"]], ids=["chinese", "english", "keep-cache"]
)
def test_a_build_from_a_cache_of_other_code_is_refused(cache, monkeypatch, capsys, argv) -> None:
    """``--language zh_CN``, ``--language en`` and ``--keep-cache`` render from the cache as it is (none
    executes a notebook); a cache filled before lib/ changed would show that code's outputs as current:
    refused, nothing rendered."""
    rendered = []
    monkeypatch.setattr(site, "build_chinese", lambda: rendered.append("zh") or 0)
    monkeypatch.setattr(site, "build_english", lambda: rendered.append("en") or 0)
    monkeypatch.setattr(site.subprocess, "Popen", None)  # the two languages side by side: not here
    monkeypatch.setattr(site.pdfs, "browser", lambda: "chromium")  # the PDF is built after the site ...
    monkeypatch.setattr(site.pdfs, "build", lambda language, **_: rendered.append(f"pdf-{language}") or 0)  # ... here
    monkeypatch.setattr(site, "execute_notebooks", lambda jobs=None: rendered.append("executed") or 0)
    execution.STAMP.write_text(json.dumps({"code": "0" * 64}))
    assert site.main(argv) == 1
    assert "holds outputs of other code" in capsys.readouterr().err
    execution.STAMP.unlink()
    assert site.main(argv) == 1
    assert "has no stamp" in capsys.readouterr().err
    assert rendered == []
    execution.write_stamp()
    if argv[0] == "--language":
        language = argv[1]
        assert site.main(argv) == 0 and rendered == [language[:2], f"pdf-{language}"]


NOTEBOOKS = {
    "plain": [nbformat.v4.new_code_cell("print('hello')")],
    "cleared": [
        nbformat.v4.new_code_cell("from IPython.display import clear_output\nprint('a')\nclear_output()\nprint('b')")
    ],
    "skipped": [
        nbformat.v4.new_code_cell("print('runs')"),
        nbformat.v4.new_code_cell("print('skipped')", metadata={"tags": ["nbval-skip"]}),
    ],
}


@pytest.mark.slow
def test_only_notebooks_whose_outputs_are_a_real_run_are_cached(tmp_path) -> None:
    """conftest.py caches what nbval saw. nbval ignores ``clear_output`` (its outputs keep 'a' that a
    real run cleared) and a skipped cell has no outputs: such a notebook is not cached (the site build
    then executes it itself); a notebook that ran through is."""
    folder = REPO / "_build" / f"test-notebooks-{uuid.uuid4().hex[:8]}"  # under the root conftest.py
    folder.mkdir(parents=True)
    try:
        for name, cells in NOTEBOOKS.items():
            nb = nbformat.v4.new_notebook(cells=cells)
            nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
            nbformat.write(nb, folder / f"{name}.ipynb")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "BOOK_"))}
        env |= {"BOOK_BUILD_DIR": str(tmp_path / "build")}
        command = [sys.executable, "-m", "pytest", str(folder), "-p", "no:cacheprovider", "-q", "-n", "0"]
        run = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
        assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
        from jupyter_cache import get_cache

        cached = {
            Path(record.uri).stem
            for record in get_cache(str(tmp_path / "build" / ".jupyter_cache")).list_cache_records()
        }
        assert cached == {"plain"}
    finally:
        shutil.rmtree(folder, ignore_errors=True)


class _Render:
    """A render process that has finished: the `subprocess.Popen` of ``tools.site.render_both``, stubbed."""

    commands: list[list[str]] = []

    def __init__(self, command, cwd, stdout, stderr) -> None:
        self.commands.append(command)
        language = command[command.index("--language") + 1]
        stdout.write(f"log of {language}\n")
        self.returncode = 1 if language == "en" and "--fail" in sys.argv else 0

    def poll(self) -> int:
        return self.returncode


def test_the_renders_run_side_by_side_and_their_logs_print_in_order(monkeypatch, capsys) -> None:
    """``python -m tools.site`` renders each language (its site, then its PDF) in a process of its own,
    the Chinese first (the longer); the logs print English first, then the Chinese one; a failed
    render fails the build."""
    monkeypatch.setattr(site.subprocess, "Popen", _Render)
    monkeypatch.setattr(site, "compile_catalogs", lambda: None)
    _Render.commands = []
    assert site.render_both(pdf=True, jobs=2) == 0
    assert [command[3:] for command in _Render.commands] == [["--language", "zh_CN"], ["--language", "en"]]
    out = capsys.readouterr().out
    assert out.index("log of en") < out.index("log of zh_CN")
    _Render.commands = []
    assert site.render_both(pdf=False, jobs=1) == 0
    assert [command[3:] for command in _Render.commands] == [
        ["--language", "zh_CN", "--no-pdf"], ["--language", "en", "--no-pdf"]
    ]  # fmt: skip
    monkeypatch.setattr(sys, "argv", [*sys.argv, "--fail"])
    assert site.render_both(pdf=True) == 1


def test_the_english_pdf_starts_from_the_english_site(monkeypatch) -> None:
    """``--language en``: the site, then the PDF from the site's pages as read (as for the Chinese)."""
    calls = []
    monkeypatch.setattr(execution, "stale_reason", lambda: None)
    monkeypatch.setattr(site.pdfs, "browser", lambda: "chromium")
    monkeypatch.setattr(site, "build_english", lambda: calls.append("site") or 0)
    monkeypatch.setattr(site.pdfs, "build", lambda language, **options: calls.append((language, options)) or 0)
    assert site.main(["--language", "en"]) == 0
    assert calls == ["site", ("en", {"environment_of": "html"})]


class _Item:
    """What conftest.py's ordering reads of a collected test."""

    def __init__(self, path: str, marker: str | None = None) -> None:
        self.path, self.marker = REPO / path, marker

    def get_closest_marker(self, name: str):
        return name if name == self.marker else None


def test_the_notebooks_run_first_the_longest_first(pytestconfig, monkeypatch) -> None:
    """The notebooks go to the workers before every other test, the longest first (by the seed
    sweep's median run time; a notebook it does not sweep after those it does), so that the two
    workers finish together; the site's readers come last, the browser files first; within a group
    the longest file first (conftest.FILE_SECONDS)."""
    conftest = pytestconfig.pluginmanager.get_plugin(str(REPO / "conftest.py"))  # the root one, not tests/'s
    monkeypatch.setattr(conftest, "NESTED", True)  # no record of the notebooks this run executes
    seconds = sweep_seconds()
    swept = sorted(seconds, key=seconds.get, reverse=True)
    assert len(swept) >= 10 and "notes.ipynb" not in swept
    assert all(seconds[name] > 0 for name in swept)
    items = [_Item("tests/test_site_zh.py", "site"), _Item("tests/test_lib.py"), _Item("book/notes.ipynb")]
    items += [_Item(f"book/{name}") for name in sorted(swept)] + [_Item("tests/test_site.py")]
    items += [_Item("tests/test_colab.py", "colab"), _Item("tests/test_pdf.py", "site")]
    items += [_Item("tests/test_browser_zh.py", "browser"), _Item("tests/test_browser.py", "browser")]
    conftest.pytest_collection_modifyitems(None, None, items)
    assert [item.path.name for item in items] == [
        *swept, "notes.ipynb", "test_site.py",
        "test_colab.py", "test_lib.py",  # beside the site build, the longest first
        "test_browser_zh.py", "test_browser.py",  # then the browser files, one for each worker
        "test_pdf.py", "test_site_zh.py",  # then the other readers of the build, the longest first
    ]  # fmt: skip


def test_reading_a_notebook_compiles_no_iri_grammar() -> None:
    """Every process that reads a notebook imports nbformat, and with it jsonschema's format checkers:
    with rfc3987 installed (requirements.txt) they leave rfc3987-syntax alone, which would compile
    its Earley parsers at import, 1.3 s of CPU in each of those processes (pytest's, its workers',
    each Sphinx build's)."""
    code = "import sys, nbformat; print(sorted(m for m in sys.modules if m.startswith(('rfc3987', 'lark'))))"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert run.stdout.strip() == "['rfc3987']"
