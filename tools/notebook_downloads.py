"""Every chapter to run at home, for readers who cannot reach Colab (loaded by `book_ext`).

Each site (English, Chinese) offers one zip, ``_downloads/transformers-executed-chapters.zip``:

- ``notebooks/``: every notebook of the book in plain Jupyter markdown, in the site's language (the
  Colab editions, ``colab/`` or ``colab/zh/``: tools/editions.py), code cells as in the chapters;
- ``lib/`` and ``pyproject.toml``: the package every chapter imports (``pip install -e .``);
- ``README.md``: how to run the notebooks, in the site's language (the repository's own README speaks of
  commands that the zip does not hold);
- ``requirements.txt``: what the chapters need to run, pinned as the book's own environment pins it,
  plus JupyterLab (chapter 9's pretrained model is a pinned wheel: no hub, no account, no download at
  run time).

A page writes ``{notebook-downloads}`` where the link goes (the "Run it locally" appendix); the link
is the zip of the site it is on, with its size. The zip is written when the build starts, from the
repository as it is.

For instructors, a second zip, ``_downloads/transformers-executed-student.zip``, holds the student
versions instead (``tools/student_versions.py``: every chapter with its solutions taken out, a cell to
work in under each exercise, in the site's language), with the same ``lib`` and requirements:
``{notebook-downloads}`` with the option ``:student:`` links to it.
"""

from __future__ import annotations

import re
import sys
import tempfile
import zipfile
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

ZIP_NAME = "transformers-executed-chapters.zip"  # the chapters of "Transformers, Executed", outputs cleared
STUDENT_ZIP = "transformers-executed-student.zip"  # the chapters without their solutions (student versions)
CHAPTERS = "book/[0-9][0-9]_*.ipynb"  # tools.common.CHAPTER_GLOB (Sphinx loads this file from tools/)
FOLDERS = {"en": "colab", "zh_CN": "colab/zh"}  # tools/editions.py's editions
# The sections of requirements.txt that running the chapters needs (not the site's, the tests' ...).
READER_SECTIONS = ("lib's runtime", "chapter 9", "book: what chapters use")
README = {
    "en": (
        "# Transformers, Executed: every chapter to run on your own machine\n\n"
        "The chapters are in notebooks/, as plain Jupyter notebooks (their outputs are made when you run\n"
        "them). Python 3.11 or newer. No account, no hub: pip installs everything below, PyTorch included.\n\n"
        "Linux or macOS:\n\n"
        "    python3 -m venv .venv\n"
        "    .venv/bin/pip install -r requirements.txt --extra-index-url https://download.pytorch.org/whl/cpu\n"
        "    .venv/bin/jupyter lab notebooks/\n\n"
        "Windows:\n\n"
        "    python -m venv .venv\n"
        "    .venv\\Scripts\\pip install -r requirements.txt\n"
        "    .venv\\Scripts\\jupyter lab notebooks\\\n\n"
        "On Linux, the extra index gives PyTorch's CPU build (about 200 MB); without it pip takes the build for\n"
        "NVIDIA GPUs, several GB. With a GPU, install PyTorch for it first (pytorch.org), then the rest.\n"
    ),
    "zh_CN": (
        "# 可执行的 Transformer 教科书：在你自己的电脑上运行每一章\n\n"
        "各章在 notebooks/ 中，是普通的 Jupyter 笔记本（输出在你运行时生成）。需要 Python 3.11 或更新版本。\n"
        "无需账号，也无需访问模型中心：下面的命令会用 pip 安装一切，包括 PyTorch。\n\n"
        "Linux 或 macOS：\n\n"
        "    python3 -m venv .venv\n"
        "    .venv/bin/pip install -r requirements.txt --extra-index-url https://download.pytorch.org/whl/cpu\n"
        "    .venv/bin/jupyter lab notebooks/\n\n"
        "Windows：\n\n"
        "    python -m venv .venv\n"
        "    .venv\\Scripts\\pip install -r requirements.txt\n"
        "    .venv\\Scripts\\jupyter lab notebooks\\\n\n"
        "在 Linux 上，额外的索引提供 PyTorch 的 CPU 版本（约 200 MB）；否则 pip 会下载为 NVIDIA GPU 构建的版本，\n"
        "有好几 GB。若有 GPU，先按 pytorch.org 的说明为它安装 PyTorch，再安装其余部分。\n"
        "若 PyPI 访问缓慢，可为 pip 加上国内镜像，例如 -i https://pypi.tuna.tsinghua.edu.cn/simple\n"
    ),
}


def reader_requirements(requirements: str) -> str:
    """The pinned lines of `requirements.txt`'s reader sections, and JupyterLab to open the notebooks."""
    keep, lines = False, ["# What the notebooks need (from the book's pinned requirements.txt)."]
    for line in requirements.splitlines():
        heading = re.match(r"#\s*---\s*(.+?)\s*---", line)
        if heading:
            keep = any(heading.group(1).startswith(s) for s in READER_SECTIONS)
            continue
        if keep and line.strip() and not line.lstrip().startswith("#"):
            lines.append(line.split("#")[0].rstrip())
    return "\n".join(lines + ["jupyterlab", "-e ."]) + "\n"


def write_zip(repo: Path, out: Path, language: str = "en", student: bool = False) -> Path:
    """The zip of one language's notebooks, `lib` and what they need, written to `out`; with `student`,
    the chapters' student versions (no solutions) instead of the notebooks."""
    out.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as z, tempfile.TemporaryDirectory() as tmp:
        root = "transformers-executed"
        if student:
            if str(repo) not in sys.path:  # Sphinx loads this file from tools/; the student tools are tools.*
                sys.path.insert(0, str(repo))
            from tools.student_versions import write_student_versions

            chapters = sorted(repo.glob(CHAPTERS))
            notebooks = write_student_versions(chapters, Path(tmp), repo=repo, language=language)
        else:
            notebooks = sorted((repo / FOLDERS[language]).glob("*.ipynb"))
        for notebook in notebooks:
            z.write(notebook, f"{root}/notebooks/{notebook.name}")
        for path in sorted((repo / "lib").rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
                z.write(path, f"{root}/{path.relative_to(repo).as_posix()}")
        z.write(repo / "pyproject.toml", f"{root}/pyproject.toml")
        z.writestr(f"{root}/README.md", README[language])  # pyproject.toml's readme: how to run the notebooks
        requirements = (repo / "requirements.txt").read_text(encoding="utf-8")
        z.writestr(f"{root}/requirements.txt", reader_requirements(requirements))
    return out


def _language(app: Sphinx) -> str:
    return app.config.language if app.config.language in FOLDERS else "en"


def build_zip(app: Sphinx) -> None:
    """Write the site's zip (an html build of the book's repository; a bare copy of pages has no `lib`)."""
    if app.builder.format == "html" and Path(app.srcdir, "pyproject.toml").is_file():
        write_zip(Path(app.srcdir), Path(app.outdir) / "_downloads" / ZIP_NAME, _language(app))
        write_zip(Path(app.srcdir), Path(app.outdir) / "_downloads" / STUDENT_ZIP, _language(app), student=True)


class NotebookDownloads(SphinxDirective):
    """``{notebook-downloads}``: a link to this site's zip of the notebooks, with how many it holds;
    with ``:student:``, to the zip of the chapters' student versions."""

    has_content = False
    option_spec = {"student": directives.flag}

    def run(self) -> list[nodes.Node]:
        depth = self.env.docname.count("/")
        student = "student" in self.options
        name = STUDENT_ZIP if student else ZIP_NAME
        uri = "../" * depth + f"_downloads/{name}"
        srcdir = Path(self.env.srcdir)
        folder = srcdir / FOLDERS[_language(self.env.app)]
        notebooks = len(list(srcdir.glob(CHAPTERS) if student else folder.glob("*.ipynb")))
        label = (
            f"{name} ({notebooks} notebooks)" if _language(self.env.app) == "en" else f"{name}（{notebooks} 个笔记本）"
        )
        link = nodes.reference("", "", nodes.literal(name, label), refuri=uri, classes=["notebook-downloads"])
        para = nodes.paragraph("", "", link)
        para["translatable"] = False  # the label is written in the site's language above
        return [para]


def setup(app: Sphinx) -> dict:
    app.add_directive("notebook-downloads", NotebookDownloads)
    app.connect("builder-inited", build_zip)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
