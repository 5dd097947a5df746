"""The book's own tools (not part of `lib`): see the README, section "Tools".

- `python -m tools.bytecode`          compiles the environment's modules, one process per core (the README's setup)
- `python -m tools.retarget`          moves every chapter's Colab setup cell to another repository/ref
- `python -m tools.editions`          writes the Colab edition of every notebook into colab/ (run it after editing a chapter)
- `python -m tools.student_versions`  writes the student versions of every chapter into student/
- `python -m tools.assignments --course DIR`  writes an nbgrader course from the chapters and book/grading.yml, plus the capstone
- `python -m tools.term_site`         writes _config.term.yml: the site for a term, without solutions
- `python -m tools.readability`       measures a built site in headless Chromium (figure labels, overflow)
- `tools/browser.py`                  a headless Chromium (Selenium) and a local server: the browser tests, readability, the PDF
- `tools/myst/`                      the book's MyST to plain Jupyter markdown (editions, student versions, assignments)
- `tools/book_ext/`                   the site build's Sphinx extension: one small extension per job (see its __init__)
- `tools/sphinx_build.py`             one Sphinx build of the book in one language (the site, the PDF and gettext use it)
- `tools/pdf.py`                      the whole book as one PDF per language (`python -m tools.pdf`)
- `tools/vendor_mathjax.sh`           refreshes the site's own MathJax, _extra/mathjax/
"""
