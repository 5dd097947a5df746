"""The book's own tools (not part of `lib`): see the README, section "Tools".

- `python tools/retarget.py`          moves every chapter's Colab setup cell to another repository/ref
- `python tools/student_versions.py`  writes the student versions of every chapter into student/
- `tools/book_ext.py`                 the site build's Sphinx extension (measured run times, progress bars)
- `tools/vendor_mathjax.sh`           refreshes the site's own MathJax, _extra/mathjax/
"""
