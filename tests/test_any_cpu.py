"""The unit tests pass on any CPU: run again with PyTorch's generic kernels (``ATEN_CPU_CAPABILITY=default``).

PyTorch picks its CPU kernels when it starts (AVX-512, AVX2 or generic), and they round differently:
two code paths that agree to the last bit with one set can differ at 1e-7 with another, and a test
that compares them with ``==`` passes on the machine it was written on and fails on a reader's
laptop. This test runs the unit tests (``-m "not site and not slow"``: the same set as the README's
fast target, without the browser, the student versions and the Colab-like run) in a fresh process
with the generic kernels, on one thread, so that the README's test command checks both kernel sets
on every machine. Floats from two code paths are compared with a tolerance derived from float32
rounding, or with ``==`` only where the operations are the same, in the same order (said in the test).
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from conftest import REPO

UNIT_TESTS = "not site and not slow and not browser and not student and not colab"


@pytest.mark.slow
def test_the_unit_tests_pass_with_the_generic_kernels() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "BOOK_TEST_RUN"))}
    env |= {"ATEN_CPU_CAPABILITY": "default", "OMP_NUM_THREADS": "1", "BOOK_NESTED_TEST_RUN": "1"}
    probe = subprocess.run(
        [sys.executable, "-c", "import torch; print(torch.backends.cpu.get_cpu_capability())"],
        env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert probe.stdout.strip() == "DEFAULT"
    command = [sys.executable, "-m", "pytest", "tests", "-m", UNIT_TESTS, "-q", "-p", "no:cacheprovider"]
    run = subprocess.run(command + ["-n", "0"], cwd=REPO, env=env, capture_output=True, text=True, timeout=1500)
    assert run.returncode == 0, "with ATEN_CPU_CAPABILITY=default:\n" + run.stdout[-6000:] + run.stderr[-2000:]
