"""The Chinese site (`_build/html/zh/`) in headless Chromium: the tests of tests/test_browser.py, on
the same pages in Chinese (`LANGUAGE`, which its `pytest_generate_tests` reads).

A file of its own so that pytest-xdist, which hands out whole files (conftest.py), can give each
language to one of the two workers: together in one file they were the run's longest stretch on one
core.
"""

from test_browser import *  # noqa: F403  (the tests, their fixtures and pytest_generate_tests)

LANGUAGE = "zh"

del test_the_readability_check_can_fail  # noqa: F821  (no page: tests/test_browser.py runs it once)
