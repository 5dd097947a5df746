"""The book's own tools (not part of `lib`): see the README, section "Tools".

- `python tools/retarget.py`          moves every chapter's Colab setup cell to another repository/ref
- `python tools/editions.py`          writes the Colab edition of every notebook into colab/ (run it after editing a chapter)
- `python tools/student_versions.py`  writes the student versions of every chapter into student/
- `python tools/assignments.py --course DIR`  writes an nbgrader course from the chapters and book/grading.yml, plus the capstone
- `python tools/term_site.py`         writes _config.term.yml: the site for a term, without solutions
- `python tools/readability.py`       measures a built site in headless Chromium (figure labels, overflow)
- `tools/myst.py`                     the book's MyST to plain Jupyter markdown (editions, student versions, assignments)
- `tools/book_ext.py`                 the site build's Sphinx extension (measured run times, progress bars)
- `tools/vendor_mathjax.sh`           refreshes the site's own MathJax, _extra/mathjax/
"""
