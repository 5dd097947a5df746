"""lib.set_theme: figures drawn for the page column, shown by IPython as SVG with their text kept as text.

Runs in a subprocess with its own IPython shell, so the theme and the shell's formatters do not leak
into other tests.
"""

import json
import subprocess
import sys

import matplotlib

from lib.book.plots import COLUMN_WIDTH_IN, FIGURE_SIZE_IN, set_theme

_IN_A_SHELL = r"""
import json
from IPython.core.interactiveshell import InteractiveShell

shell = InteractiveShell.instance()
import matplotlib
matplotlib.use("agg")
import matplotlib.pyplot as plt
import lib
from lib.book.diagrams import mask_grids

lib.set_theme()
fig, ax = plt.subplots()
ax.plot([0, 1], [1, 0], label="a line")
ax.set(xlabel="step", ylabel="loss", title="a plot")
ax.legend()
formats = {}
for name, figure in {"plot": fig, "schematic": mask_grids(["<bos>", "a", "b"])}.items():
    data, _ = shell.display_formatter.format(figure)
    formats[name] = {mime: data[mime] for mime in data if mime.startswith("image/")}
    again, _ = shell.display_formatter.format(figure)
    formats[name]["same twice"] = again["image/svg+xml"] == data["image/svg+xml"]
print(json.dumps(formats))
"""


def test_theme_keeps_text_as_text_and_fits_the_column():
    with matplotlib.rc_context():
        set_theme()
        assert matplotlib.rcParams["svg.fonttype"] == "none"
        width, _ = matplotlib.rcParams["figure.figsize"]
    assert width == FIGURE_SIZE_IN[0] <= COLUMN_WIDTH_IN <= 7.2


def test_under_ipython_plots_and_schematics_are_svg_with_text_elements():
    out = subprocess.run([sys.executable, "-c", _IN_A_SHELL], capture_output=True, text=True, check=True).stdout
    formats = json.loads(out.strip().splitlines()[-1])
    for name, data in formats.items():
        assert data.pop("same twice"), f"{name}: two renderings of one figure differ (a time stamp, random ids?)"
        assert list(data) == ["image/svg+xml"], f"{name}: shown as {list(data)}, expected SVG only"
        svg = data["image/svg+xml"]
        assert "<text" in svg, f"{name}: its labels are not <text> elements (svg.fonttype is not 'none'?)"
    assert ">loss<" in formats["plot"]["image/svg+xml"]


def test_outside_ipython_set_theme_leaves_the_display_alone():
    code = "import lib; from lib.book.plots import _inline_figures_as_svg; lib.set_theme(); print(_inline_figures_as_svg())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


_THEMES = r"""
import json, sys
import matplotlib as mpl
import lib
from lib.book.palette import PALETTE
from lib.book.plots import SEABORN_WHITEGRID
lib.set_theme()
print(json.dumps({"seaborn imported": "seaborn" in sys.modules}))
import seaborn as sns
with mpl.rc_context():
    mpl.rcdefaults()
    defaults = dict(mpl.rcParams)
    sns.set_theme(context="notebook", style="whitegrid", palette="colorblind")
    theirs = {k: v for k, v in mpl.rcParams.items() if v != defaults[k]}
    palette = sns.color_palette("colorblind").as_hex()
    mpl.rcdefaults()
    mpl.rcParams.update(SEABORN_WHITEGRID)
    ours = {k: v for k, v in mpl.rcParams.items() if v != defaults[k]}
theirs.pop("image.cmap")  # "rocket", a seaborn colour map: left out on purpose
cycle = [mpl.colors.to_hex(c) for c in theirs.pop("axes.prop_cycle").by_key()["color"]]
print(json.dumps({"differ": sorted(k for k in set(theirs) | set(ours) if str(theirs.get(k)) != str(ours.get(k))),
                  "palette": list(PALETTE) == palette == cycle}))
"""


def test_the_theme_is_seaborns_whitegrid_without_importing_seaborn():
    """set_theme writes seaborn's settings out (importing seaborn cost every chapter ~0.7 s): still seaborn's."""
    out = subprocess.run([sys.executable, "-c", _THEMES], capture_output=True, text=True, check=True).stdout
    first, second = (json.loads(line) for line in out.strip().splitlines()[-2:])
    assert first == {"seaborn imported": False}, "lib.set_theme imported seaborn"
    assert second["differ"] == [], f"these settings are no longer seaborn's: {second['differ']}"
    assert second["palette"], "the colour cycle is not seaborn's colour-blind palette"
