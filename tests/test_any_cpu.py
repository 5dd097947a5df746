"""The unit tests pass on any CPU: run again with PyTorch's generic kernels (``ATEN_CPU_CAPABILITY=default``).

PyTorch picks its CPU kernels when it starts (AVX-512, AVX2 or generic), and they round differently:
two code paths that agree to the last bit with one set can differ at 1e-7 with another, and a test
that compares them with ``==`` passes on the machine it was written on and fails on a reader's
laptop. This test runs the unit tests (``-m "not site and not slow"``: the same set as the README's
fast target, without the browser, the student versions and the Colab-like run) in a fresh process
with the generic kernels, on one thread, so that the README's test command checks both kernel sets
on every machine. Floats from two code paths are compared with a tolerance derived from float32
rounding, or with ``==`` only where the operations are the same, in the same order (said in the test).

Only the test files that compute with PyTorch go round again (:func:`numeric_test_files`: those that
import ``torch`` or ``lib``); the tests of the book's tools, the layout, the workflows and the lint
read files and strings, which no kernel set changes.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO

UNIT_TESTS = "not site and not slow and not browser and not student and not colab"
#: A test file that computes with PyTorch: it imports torch or lib (at its top or inside a test), other
#: than lib's table of claim labels (lib/book/claim_labels.py: JSON read with the standard library, which
#: the tools' tests of the Chinese catalogs read too).
COMPUTES = re.compile(r"^\s*(?:import|from) (?:torch|lib(?!\.book\.claim_labels\b))\b", re.MULTILINE)


def numeric_test_files(tests: Path = REPO / "tests") -> list[str]:
    """The test files whose results a kernel set can change, relative to the repository."""
    return sorted(
        path.relative_to(REPO).as_posix()
        for path in tests.rglob("test_*.py")
        if COMPUTES.search(path.read_text(encoding="utf-8"))
    )


def test_the_generic_kernels_rerun_every_test_that_computes_and_only_those() -> None:
    files = numeric_test_files()
    for computes in ("tests/model/test_reference.py", "tests/training/test_ensemble.py", "tests/test_rnn.py",
                     "tests/efficient/test_blockwise.py", "tests/training/test_learning.py"):  # fmt: skip
        assert computes in files
    for reads in (
        "tests/test_layout.py",
        "tests/tools/test_editions.py",
        "tests/tools/test_i18n.py",
        "tests/test_lint.py",
    ):
        assert reads not in files


@pytest.mark.slow
def test_the_unit_tests_pass_with_the_generic_kernels() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "BOOK_TEST_RUN"))}
    env |= {"ATEN_CPU_CAPABILITY": "default", "OMP_NUM_THREADS": "1", "BOOK_NESTED_TEST_RUN": "1"}
    probe = subprocess.run(
        [sys.executable, "-c", "import torch; print(torch.backends.cpu.get_cpu_capability())"],
        env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert probe.stdout.strip() == "DEFAULT"
    command = [sys.executable, "-m", "pytest", *numeric_test_files(), "-m", UNIT_TESTS, "-q", "-p", "no:cacheprovider"]
    run = subprocess.run(command + ["-n", "0"], cwd=REPO, env=env, capture_output=True, text=True, timeout=1500)
    assert run.returncode == 0, "with ATEN_CPU_CAPABILITY=default:\n" + run.stdout[-6000:] + run.stderr[-2000:]
