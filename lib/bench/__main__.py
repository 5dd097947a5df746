"""``python -m lib.bench``: see :func:`lib.bench.suite.main`."""

from .suite import main

main()
