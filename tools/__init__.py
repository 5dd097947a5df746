"""The book's own tools (not part of `lib`): see the README, section "Tools".

- `python tools/retarget.py`          moves every chapter's Colab setup cell to another repository/ref
- `python tools/editions.py`          writes the Colab edition of every notebook into colab/ (run it after editing a chapter)
- `python tools/student_versions.py`  writes the student versions of every chapter into student/
- `tools/myst.py`                     the book's MyST to plain Jupyter markdown (editions, student versions)
- `tools/book_ext.py`                 the site build's Sphinx extension (measured run times, progress bars)
- `tools/vendor_mathjax.sh`           refreshes the site's own MathJax, _extra/mathjax/
"""
