"""tools/bytecode.py: the environment's modules compiled ahead, one process per core (the README's
commands run it after `pip install --no-compile`)."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

from tools import bytecode


def _package(root: Path) -> tuple[Path, Path, Path]:
    good = root / "pkg" / "good.py"
    later = root / "pkg" / "later.py"  # what this Python cannot compile (as torch's py312_intrinsics.py on 3.11)
    nested = root / "pkg" / "sub" / "nested.py"
    nested.parent.mkdir(parents=True)
    good.write_text("def f(x):\n    return x + 1\n")
    later.write_text("def f(:\n")
    nested.write_text("VALUE = 2\n")
    return good, later, nested


def test_every_module_gets_its_bytecode_and_a_module_for_a_later_python_is_named(tmp_path) -> None:
    good, later, nested = _package(tmp_path)
    paths = bytecode.modules([tmp_path])
    assert paths == sorted([good, later, nested])
    assert bytecode.compile_modules(paths, jobs=2) == [later]
    for path in (good, nested):
        assert Path(importlib.util.cache_from_source(str(path))).is_file(), path
    assert not Path(importlib.util.cache_from_source(str(later))).exists()


def test_a_second_run_leaves_current_bytecode_alone(tmp_path) -> None:
    good, _, _ = _package(tmp_path)
    assert bytecode.compile_modules([good], jobs=1) == []
    pyc = Path(importlib.util.cache_from_source(str(good)))
    os.utime(pyc, (1, 1))  # a mark: rewriting the file would move it
    assert bytecode.compile_modules([good], jobs=1) == []
    assert pyc.stat().st_mtime == 1
    good.write_text("def f(x):\n    return x + 2\n")
    os.utime(good, (2_000_000_000, 2_000_000_000))  # the source changed: compiled again
    assert bytecode.compile_modules([good], jobs=1) == []
    assert pyc.stat().st_mtime != 1


def test_it_compiles_this_pythons_site_packages() -> None:
    import sysconfig

    folders = bytecode.site_packages()
    assert Path(sysconfig.get_paths()["purelib"]) in folders
    assert all(folder.is_dir() for folder in folders)
