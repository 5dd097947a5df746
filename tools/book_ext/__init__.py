"""The book's Sphinx extension (loaded by `_config.yml`: `sphinx.local_extensions: {book_ext: tools}`).

It is a thin one: its `setup()` loads the small extensions of this package, each with one job (and
its own `setup()`), and the two extensions beside it:

- `runtimes`       measured run times: ``{chapter-runtime}``, ``{build-machine}``, ``{chapter-runtimes}``;
- `reading_time`   how long each chapter takes to read, beside its run time in ``{chapter-runtimes}``;
- `claim_data`     the claims (and explorers) of a page as data: myst-nb's renderer, anchors;
- `claim_groups`   the claim boxes drawn from their data, a cell's consecutive claims in one box;
- `claims_ledger`  the Claims appendix, ``{claims-ledger}``, with the seed sweep;
- `numbering`      exercises and figures numbered per chapter ("Exercise 2.1");
- `bibliography`   the References page: author–year labels, sorted, a list for screen readers;
- `page_content`   what a page shows: no solution markers, alt text from captions, math with its punctuation;
- `header_buttons` the Colab button opens the Colab edition; the download menu offers the PDF;
- `scripts`        each page lists each of its scripts once (clean consoles);
- `folded_cells`   folded cells: their prompts named by what they show, left out of the PDF;
- `build_speed`    each doctree read once for {numref}, no search index for the one-page book;
- `phone_figures`  every SVG figure says how narrow it may get, and is a link to itself;
- `chapters`, `words`  what these share: chapter N's page, the words they write in each language;
- ``i18n_ext`` (``tools/i18n_ext/``) the site in two languages; ``notebook_downloads`` every chapter to
  run at home.

**Progress bars.** The kernels that the build starts get tqdm's own switch ``TQDM_DISABLE=1``: no live
bars, and `lib.train` prints one plain line per run instead (steps, seconds, last loss and metrics),
with no bar glyphs on the page. A live tqdm widget needs a running kernel; Jupyter and Colab readers still get one.
"""

from __future__ import annotations

import os

# In this order (listeners of one event and priority run in the order they were connected).
EXTENSIONS = (
    "bibliography",
    "claim_data",
    "claim_groups",
    "build_speed",
    "reading_time",
    "runtimes",
    "claims_ledger",
    "folded_cells",
    "page_content",
    "numbering",
    "scripts",
    "header_buttons",
    "phone_figures",
)


def setup(app) -> dict:
    # For every kernel this build starts (they inherit the environment): see lib.training.loop.
    os.environ.setdefault("TQDM_DISABLE", "1")
    app.setup_extension("i18n_ext")  # the Chinese edition: tools/i18n_ext/
    app.setup_extension("notebook_downloads")  # every chapter to run at home: tools/notebook_downloads.py
    for name in EXTENSIONS:  # this package's extensions, as imported ("book_ext" in Sphinx, "tools.book_ext" in tests)
        app.setup_extension(f"{__name__}.{name}")
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True, "env_version": 2}
