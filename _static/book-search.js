// Search results: the summary under each hit is read from the page's HTML, where inline math is still
// TeX (MathJax draws it only on the page itself): drop the delimiters \( \) \[ \] so that a snippet
// reads "O(T)", not "\(O(T)\)".
(function () {
  if (typeof Search === "undefined" || !Search.makeSearchSummary) return;
  const original = Search.makeSearchSummary;
  Search.makeSearchSummary = function () {
    const summary = original.apply(this, arguments);
    if (summary) summary.textContent = summary.textContent.replace(/\\[()[\]]/g, "");
    return summary;
  };
})();
