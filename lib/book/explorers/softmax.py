"""The softmax of growing scores, scaled by 1/√d_k and not (chapter 3)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import torch

from .draw import GRID, MUTED, SERIES, slider, text
from .explorer import Explorer, call_of
from .kit import el, join, number
from .words import say

_SCRIPT = """
const slider=$('input[type=range]');
function draw(){const n=+slider.value,d=data.d_ks[n];$('.dk').textContent=d;
slider.setAttribute('aria-valuetext',say('slider_value',{d:d}));
for(const way of ['scaled','unscaled']){const w=data[way].w[n];
$$('rect.bar.'+way).forEach((b)=>{const h=data.plot_h*w[+b.dataset.col];b.setAttribute('y',data.top+data.plot_h-h);
b.setAttribute('height',h);});
$('text.stat.'+way).textContent=say('stat',{std:fmt(data[way].std[n],2),max:fmt(data[way].max[n],2)});}
let s=say('readout',{d:d,scaled:fmt(data.scaled.max[n],2),unscaled:fmt(data.unscaled.max[n],2)});
if(data.mean_largest)s+=say('mean',{scaled:fmt(data.mean_largest.scaled[n],2),
unscaled:fmt(data.mean_largest.unscaled[n],2)});$('.explorer-readout').textContent=s;root.dataset.dk=d;
root.dataset.scaledMax=data.scaled.max[n];root.dataset.unscaledMax=data.unscaled.max[n];}
slider.addEventListener('input',draw);draw();
"""


def softmax_explorer(d_ks: Sequence[int], scores: torch.Tensor, *, mean_largest: Mapping[str, Sequence[float]] | None = None,
                     start: int = -1, name: str = "saturation") -> Explorer:  # fmt: skip
    r"""A slider over :math:`d_k`: for one query and its keys, the softmax weights of the scores
    :math:`e_j = q k_j^\top` scaled by :math:`1/\sqrt{d_k}` (left) and unscaled (right), keys sorted by
    score, with the spread (standard deviation) of each set of scores and its largest weight.

    ``scores`` is ``[len(d_ks), T]``: row ``n`` the unscaled scores at ``d_ks[n]``. ``mean_largest``
    (``{"scaled": [...], "unscaled": [...]}``, one number per ``d_k``) adds the chapter's measured mean
    largest weight over many queries to the line below. The slider starts at ``d_ks[start]`` (the
    widest, by default): the figure a reader without JavaScript sees.
    """
    call = call_of("softmax_explorer", [], d_ks=d_ks, scores=scores, mean_largest=mean_largest, start=start, name=name)
    e = torch.as_tensor(scores).detach().double().cpu()
    if e.dim() != 2 or e.size(0) != len(d_ks):
        raise ValueError(f"scores must be [len(d_ks)={len(d_ks)}, T], got {list(e.shape)}")
    if not -len(d_ks) <= start < len(d_ks):
        raise ValueError(f"start={start} is not an index of d_ks (of length {len(d_ks)})")
    start %= len(d_ks)
    T = e.size(1)
    ways = {"scaled": torch.stack([e[n] / math.sqrt(d) for n, d in enumerate(d_ks)]), "unscaled": e}
    panel_w, gap, left, top, plot_h = 250.0, 40.0, 30.0, 30.0, 150.0
    width, height = left + 2 * panel_w + gap + 10, top + plot_h + 44
    bar = panel_w / T
    data: dict = {"d_ks": list(d_ks), "T": T, "bar": bar, "plot_h": plot_h, "top": top}
    parts = []
    for k, (way, s) in enumerate(ways.items()):
        weights = s.softmax(dim=-1).sort(dim=-1, descending=True).values
        data[way] = {"w": [[round(float(x), 4) for x in row] for row in weights],
                     "std": [float(row.std()) for row in s], "max": [float(row[0]) for row in weights]}  # fmt: skip
        x0 = left + k * (panel_w + gap)
        parts.append(text(x0, 16, say(f"softmax.{way}"), 12, font_weight="bold"))
        for tick in (0.0, 0.5, 1.0):
            y = top + plot_h * (1 - tick)
            parts.append(el("line", x1=x0, x2=x0 + panel_w, y1=y, y2=y, stroke=GRID, stroke_width=1))
            parts.append(text(x0 - 4, y + 4, number(tick, "g"), 10, "end", fill=MUTED))
        for j in range(T):
            h = plot_h * float(weights[start, j])
            parts.append(el("rect", x=x0 + j * bar + 1, y=top + plot_h - h, width=bar - 2, height=h,
                            fill=SERIES[k], class_=f"bar {way}", data_col=str(j)))  # fmt: skip
        parts.append(text(x0, top + plot_h + 16, say("softmax.keys", n=number(T)), 10, fill=MUTED))
        stat = say(
            "softmax.stat", std=number(data[way]["std"][start], ".2f"), max=number(data[way]["max"][start], ".2f")
        )
        parts.append(text(x0, top + plot_h + 32, stat, 11, class_=f"stat {way}"))
    if mean_largest is not None:
        data["mean_largest"] = {way: [float(x) for x in mean_largest[way]] for way in ways}
    d = number(d_ks[start])
    controls = slider("softmax.slider", "dk", d, steps=len(d_ks), at=start, aria_label=say("softmax.slider_aria"),
                      aria_valuetext=say("softmax.slider_value", d=d))  # fmt: skip
    readout = say("softmax.readout", d=d, scaled=number(data["scaled"]["max"][start], ".2f"),
                  unscaled=number(data["unscaled"]["max"][start], ".2f"))  # fmt: skip
    return Explorer(name, join(parts), width=width, height=height, data=data, script=_SCRIPT, controls=controls,
                    readout=readout, words="softmax", call=call)  # fmt: skip
