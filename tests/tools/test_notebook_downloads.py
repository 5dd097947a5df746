"""tools/notebook_downloads.py: the zips a site offers, here the instructors' one without solutions."""

from __future__ import annotations

import json
import zipfile

from tools.common import REPO, chapters
from tools.notebook_downloads import STUDENT_ZIP, write_zip


def test_the_student_zip_holds_every_chapter_without_its_solutions(tmp_path) -> None:
    out = write_zip(REPO, tmp_path / STUDENT_ZIP, "en", student=True)
    with zipfile.ZipFile(out) as z:
        names = set(z.namelist())
        notebooks = sorted(n for n in names if n.startswith("transformers-executed/notebooks/"))
        assert [n.rsplit("/", 1)[1] for n in notebooks] == [p.name for p in chapters()]
        for name in notebooks:
            text = z.read(name).decode()
            json.loads(text)  # a notebook
            assert "### BEGIN SOLUTION" not in text, name
            source = (REPO / "book" / name.rsplit("/", 1)[1]).read_text(encoding="utf-8")
            assert ("### BEGIN SOLUTION" in source) <= ("YOUR CODE HERE" in text), name  # a stub for each
        for needed in ("lib/__init__.py", "pyproject.toml", "README.md", "requirements.txt"):
            assert f"transformers-executed/{needed}" in names, needed
