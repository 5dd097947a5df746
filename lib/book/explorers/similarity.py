"""Similarity by offset, one curve per kind of position (chapter 6)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .draw import GRID, HIGHLIGHT, MUTED, SERIES, select, slider, text
from .explorer import Explorer, call_of
from .kit import el, join, number
from .words import say, term

_SCRIPT = """
const kind=$('select'),slider=$('input[type=range]'),N=data.offsets.length;
const X=(n)=>data.left+data.w*n/Math.max(N-1,1),Y=(v)=>data.top+data.h*(data.hi-v)/((data.hi-data.lo)||1);
function draw(){const k=+kind.value,y=data.ys[data.kinds[k]],n=+slider.value,d=data.offsets[n];
$('.curve').setAttribute('points',y.map((v,i)=>X(i).toFixed(1)+','+Y(v).toFixed(1)).join(' '));
$('.curve').setAttribute('stroke',data.colors[k%data.colors.length]);
$('.cursor').setAttribute('x1',X(n));$('.cursor').setAttribute('x2',X(n));$('.dot').setAttribute('cx',X(n));
$('.dot').setAttribute('cy',Y(y[n]));$('.delta').textContent=d;slider.setAttribute('aria-valuetext',say('slider_value',{d:d}));
$('.explorer-readout').textContent=say('readout',{kind:data.kinds[k],d:d,ylabel:data.ylabel,value:fmt(y[n],3)});
root.dataset.kind=data.kinds[k];root.dataset.offset=d;root.dataset.value=y[n];}
kind.addEventListener('change',draw);slider.addEventListener('input',draw);draw();
"""


def similarity_explorer(offsets: Sequence[int], curves: Mapping[str, Sequence[float]], *, ylabel: str = "similarity",
                        name: str = "positions") -> Explorer:  # fmt: skip
    """One curve per kind of position, ``curves[kind][n]`` its similarity at offset ``offsets[n]``: a menu
    picks the kind, a slider the offset δ, and the line below reads the value off the curve."""
    call = call_of("similarity_explorer", [ylabel, *curves], offsets=offsets, curves=curves, ylabel=ylabel, name=name)
    curves, ylabel = {term(kind): values for kind, values in curves.items()}, term(ylabel)
    kinds = list(curves)
    ys = {k: [float(v) for v in curves[k]] for k in kinds}
    if any(len(v) != len(offsets) for v in ys.values()):
        raise ValueError(f"every curve needs one value per offset ({len(offsets)}), got "
                         f"{ {k: len(v) for k, v in ys.items()} }")  # fmt: skip
    lo = min(0.0, min(min(v) for v in ys.values()))
    hi = max(max(v) for v in ys.values())
    left, top, plot_w, plot_h = 46.0, 12.0, 440.0, 170.0
    width, height = left + plot_w + 16, top + plot_h + 44
    x_of = lambda n: left + plot_w * n / max(len(offsets) - 1, 1)  # noqa: E731
    y_of = lambda v: top + plot_h * (hi - v) / (hi - lo or 1.0)  # noqa: E731
    parts = []
    for tick in sorted({lo, 0.0, hi}):
        y = y_of(tick)
        parts.append(el("line", x1=left, x2=left + plot_w, y1=y, y2=y, stroke=GRID, stroke_width=1))
        parts.append(text(left - 5, y + 4, number(tick, ".2g"), 10, "end", fill=MUTED))
    for n in range(0, len(offsets), max(1, len(offsets) // 5)):
        parts.append(text(x_of(n), top + plot_h + 15, number(offsets[n]), 10, "middle", fill=MUTED))
    parts.append(text(left + plot_w / 2, top + plot_h + 32, say("similarity.axis"), 11, "middle"))
    middle = number(top + plot_h / 2, ".1f")
    parts.append(text(12, top + plot_h / 2, ylabel, 11, "middle", transform=f"rotate(-90 12 {middle})"))
    first = ys[kinds[0]]
    points = " ".join(f"{number(x_of(n), '.1f')},{number(y_of(v), '.1f')}" for n, v in enumerate(first))
    parts.append(el("polyline", points=points, fill="none", stroke=SERIES[0], stroke_width=2, class_="curve"))
    parts.append(el("line", x1=x_of(0), x2=x_of(0), y1=top, y2=top + plot_h, stroke=HIGHLIGHT, stroke_width=1,
                    stroke_dasharray="3 3", class_="cursor"))  # fmt: skip
    parts.append(el("circle", cx=x_of(0), cy=y_of(first[0]), r=4.5, fill=HIGHLIGHT, class_="dot"))
    data = {"offsets": list(offsets), "kinds": kinds, "ys": ys, "lo": lo, "hi": hi, "left": left, "top": top,
            "w": plot_w, "h": plot_h, "colors": SERIES, "ylabel": ylabel}  # fmt: skip
    d = number(offsets[0])
    controls = select(say("similarity.kind"), kinds, 0) + slider(
        "similarity.slider", "delta", d, steps=len(offsets), at=0, aria_label=say("similarity.slider_aria"),
        aria_valuetext=say("similarity.slider_value", d=d))  # fmt: skip
    readout = say("similarity.readout", kind=kinds[0], d=d, ylabel=ylabel, value=number(first[0], ".3f"))
    return Explorer(name, join(parts), width=width, height=height, data=data, script=_SCRIPT,
                    controls=controls, readout=readout, words="similarity", call=call)  # fmt: skip
