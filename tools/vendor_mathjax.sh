#!/usr/bin/env bash
# Refresh the site's own copy of MathJax in _extra/mathjax/ (served instead of a CDN, so the
# pages render their math offline, e.g. in CI's browser test). _config.yml points
# sphinx.config.html_extra_path at _extra/ and mathjax_path at it. Needs npm (any registry mirror will do):
#   bash tools/vendor_mathjax.sh [VERSION]      # default: the version below
# Kept: the TeX-input/CommonHTML-output component, its web fonts, and the TeX extensions that
# it loads on demand (\boldsymbol, \cancel, ...). MathJax is Apache-2.0; its LICENSE is kept too.
set -euo pipefail
VERSION="${1:-3.2.2}"
cd "$(dirname "$0")/.."
DEST=_extra/mathjax
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
(cd "$TMP" && npm pack --silent "mathjax@$VERSION" >/dev/null && tar xzf mathjax-*.tgz)
SRC="$TMP/package"
rm -rf "$DEST"
mkdir -p "$DEST/output/chtml/fonts" "$DEST/input/tex"
cp "$SRC/es5/tex-chtml.js" "$DEST/"
cp -r "$SRC/es5/output/chtml/fonts/woff-v2" "$DEST/output/chtml/fonts/"
cp -r "$SRC/es5/input/tex/extensions" "$DEST/input/tex/"
cp "$SRC/LICENSE" "$DEST/LICENSE"
echo "mathjax@$VERSION (npm), es5 subset: tex-chtml.js, output/chtml/fonts/woff-v2, input/tex/extensions" > "$DEST/VERSION.txt"
du -sh "$DEST"
