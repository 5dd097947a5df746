"""Compile the environment's Python modules to bytecode, one process per core.

    python -m tools.bytecode          # every module of this Python's site-packages

The README's commands install with ``pip install --no-compile`` and then run this: pip compiles the
~19,000 modules it installs (transformers, torch, sympy, pandas, ...) one after another, on one core,
for about a minute of a 2-core machine's two-minute setup; here the same files are compiled by every
core at once, in half the time. What is compiled is what pip would have written: one ``.pyc`` per
module beside it, in ``__pycache__``, checked against the source's modification time.

Compiling ahead matters most where Python writes no bytecode itself (``PYTHONDONTWRITEBYTECODE=1``, as
on the machine the README's times come from): there, every process would compile each module it
imports again, every time.

A module this Python cannot compile (one written for a later Python, such as torch's
``testing/_internal/py312_intrinsics.py``) is skipped and named, as pip skips it: nothing imports it
here. Modules compiled already, and unchanged since, are left as they are, so a second run is quick.
"""

from __future__ import annotations

import compileall
import os
import sys
import sysconfig
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path


def site_packages() -> list[Path]:
    """This Python's folders of installed packages (pure and platform-specific; usually one)."""
    paths = sysconfig.get_paths()
    return sorted({Path(paths["purelib"]), Path(paths["platlib"])})


def modules(folders: list[Path]) -> list[Path]:
    """Every ``.py`` file under ``folders``, in a fixed order."""
    return sorted(path for folder in folders for path in folder.rglob("*.py") if path.is_file())


def _compile(path: Path) -> bool:
    """Compile one module unless its bytecode is current; False if this Python cannot compile it."""
    return bool(compileall.compile_file(str(path), quiet=2))


def compile_modules(paths: list[Path], jobs: int | None = None) -> list[Path]:
    """Compile ``paths``, ``jobs`` processes at a time (default: one per core); the modules that failed."""
    if not paths:
        return []
    jobs = max(1, jobs or os.cpu_count() or 1)
    if jobs == 1:
        done = [_compile(path) for path in paths]
    else:
        with ProcessPoolExecutor(jobs) as pool:
            done = list(pool.map(_compile, paths, chunksize=256))
    return [path for path, ok in zip(paths, done) if not ok]


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m tools.bytecode", description=__doc__.split("\n")[0])
    parser.add_argument("--jobs", type=int, default=None, help="processes at a time (default: one per core)")
    args = parser.parse_args(argv)
    folders = site_packages()
    start = time.perf_counter()
    paths = modules(folders)
    failed = compile_modules(paths, args.jobs)
    where = ", ".join(str(folder) for folder in folders)
    print(f"tools.bytecode: {len(paths)} modules of {where} compiled in {time.perf_counter() - start:.0f} s")
    if failed:
        names = ", ".join(os.path.relpath(path, folders[0]) for path in failed[:3])
        print(f"  {len(failed)} not for this Python ({sys.version.split()[0]}), skipped as pip skips them: {names}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
