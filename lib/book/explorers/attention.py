"""Attention weights: a heatmap whose rows can be pointed at (chapters 2, 4 and 9)."""

from __future__ import annotations

from collections.abc import Sequence

import torch

from .draw import (
    INK,
    MUTED,
    ROW_PITCH,
    SERIES,
    blues,
    column_label,
    lines,
    outline,
    row_label,
    row_target,
    select,
    text,
    text_width,
    wrap,
)
from ...model.checks import check_choice
from .explorer import Explorer, call_of
from .kit import el, join, number
from .words import say, term

QUANTITIES = ("weights", "probabilities")  # what an attention_explorer's rows hold: the words it says

_SCRIPT = """
const sel=$$('select[data-selector]');let view=0,row=0;
function W(i,j){return data.w[(view*data.Q+i)*data.K+j]/1000;}
const set=(list)=>list[list.length>1?+sel[0].value:0];
function pick(i){row=i;const y=data.top+i*data.cell-1;$('.outline').setAttribute('y',y);let sum=0,out=0;
const labels=set(data.rows),cols=set(data.cols);current(i);
for(let j=0;j<data.K;j++){const v=W(i,j),h=data.barh*v;sum+=v;if(data.values)out+=v*data.values[j];
const b=$('rect.bar[data-col="'+j+'"]');b.setAttribute('y',data.base-h);b.setAttribute('height',h);
b.dataset.weight=v.toFixed(3);b.firstChild.textContent=say('bar',{key:cols[j],weight:v.toFixed(3)});
const t=$('text.bar-text[data-col="'+j+'"]');if(t){t.setAttribute('y',data.base-h-3);t.textContent=fmt(v,2);}}
let top=0;for(let j=1;j<data.K;j++)if(W(i,j)>W(i,top))top=j;
const tied=[];for(let j=0;j<data.K;j++)if(W(i,top)-W(i,j)<0.0015)tied.push(j);
const views=sel.map((x)=>say('view',{label:x.dataset.label,option:x.options[x.selectedIndex].text})).join(S.list);
const v={row:data.row_title,label:labels[i],views:sel.length?say('views',{views:views}):'',key:cols[top],
weight:fmt(W(i,top),2),sum:fmt(sum,2),n:data.K,column:data.column_title,
keys:tied.map((j)=>say('quoted',{key:cols[j]})).join(S.list)};
let s=say(tied.length===data.K&&data.K>1?'readout_even':tied.length>1?'readout_tie':'readout',v);
if(data.values)s+=say('output',{output:fmt(out,2)});
$('.explorer-readout').textContent=s;root.dataset.row=i;root.dataset.sum=sum;if(data.values)root.dataset.output=out;
root.dataset.weights=JSON.stringify(Array.from({length:data.K},(_,j)=>W(i,j)));}
function draw(){view=0;sel.forEach((s,k)=>{view=view*data.shape[k]+(+s.value);});const r=set(data.rows),c=set(data.cols);
$$('text.row-label').forEach((t)=>{t.textContent=r[+t.dataset.index];
t.setAttribute('aria-label',say('row_aria',{row:data.row_title,label:r[+t.dataset.index]}));});
$$('text.col-label').forEach((t)=>{t.textContent=c[+t.dataset.col];});
$$('rect.cell').forEach((e)=>{e.setAttribute('fill',blues(W(+e.dataset.row,+e.dataset.col)/data.vmax));});
$$('text.cell-text').forEach((e)=>{const v=W(+e.dataset.row,+e.dataset.col);e.textContent=fmt(v,2);
e.setAttribute('fill',v/data.vmax>0.6?'white':C.ink);});root.dataset.view=view;pick(row);}
rows(data.Q,pick);sel.forEach((s)=>s.addEventListener('change',draw));draw();
"""


def attention_explorer(
    weights: torch.Tensor,
    rows: Sequence[str] | Sequence[Sequence[str]],
    columns: Sequence[str] | Sequence[Sequence[str]],
    *,
    selectors: Sequence[tuple[str, Sequence[str]]] = (),
    values: Sequence[float] | None = None,
    row_title: str = "query",
    column_title: str = "key",
    vmax: float | None = None,
    name: str = "attention",
    quantity: str = "weights",
) -> Explorer:
    r"""Attention weights ``[*S, T_q, T_k]`` as a heatmap: point at a query (its row) to see its weights
    :math:`\alpha_{ij}` over the keys as bars below the map, and their sum; with ``values`` (one number
    per key), the output they average to, :math:`o_i = \sum_j \alpha_{ij} v_j`.

    ``selectors`` name the leading dimensions ``S`` (a label and one option name per index), shown as
    ``<select>`` menus: e.g. ``[("layer", ["0", "1"]), ("head", ["0", "1", "2"])]`` for ``[2, 3, T, T]``.
    ``rows`` and ``columns`` label the queries and keys; a list of label lists gives one per option of
    the first selector (e.g. one per sentence, of equal lengths). The colours run from 0 to ``vmax``
    (default: the largest weight of all views), as :func:`lib.plot_attention`'s; the bars from 0 to 1.
    ``quantity``: what the rows hold, ``"weights"`` (attention's) or ``"probabilities"`` (a model's
    distributions over the columns, e.g. chapter 10's cloze): the words the explorer says, nothing else.
    """
    words = {"weights": "attention", "probabilities": "distribution"}[check_choice("quantity", quantity, QUANTITIES)]
    call = call_of("attention_explorer", [row_title, column_title, *(t for s in selectors for t in (s[0], *s[1]))],
                   weights=weights, rows=rows, columns=columns, selectors=selectors, values=values,
                   row_title=row_title, column_title=column_title, vmax=vmax, name=name, quantity=quantity)  # fmt: skip
    row_title, column_title = term(row_title), term(column_title)
    selectors = [(term(label), [term(o) for o in options]) for label, options in selectors]
    w = torch.as_tensor(weights).detach().float().cpu()
    if w.dim() != 2 + len(selectors):
        raise ValueError(f"weights has shape {list(w.shape)}: expected {len(selectors)} selector dimensions "
                         "and then [T_q, T_k]")  # fmt: skip
    for (label, options), size in zip(selectors, w.shape):
        if len(options) != size:
            raise ValueError(f"selector {label!r} has {len(options)} options for a dimension of size {size}")
    Q, K = w.shape[-2:]
    top_colour = float(w.max()) if vmax is None else float(vmax)
    if not top_colour > 0:
        raise ValueError(f"vmax must be positive, got {top_colour}")
    row_sets = [list(rows)] if rows and isinstance(rows[0], str) else [list(r) for r in rows]
    column_sets = [list(columns)] if columns and isinstance(columns[0], str) else [list(c) for c in columns]
    for what, sets, size in (("rows", row_sets, Q), ("columns", column_sets, K)):
        if any(len(s) != size for s in sets):
            raise ValueError(f"{what}: every label list must have {size} labels, got {[len(s) for s in sets]}")
        if len(sets) > 1 and (not selectors or len(sets) != w.shape[0]):
            raise ValueError(f"{what}: one label list per option of the first selector, got {len(sets)}")
    if values is not None and len(values) != K:
        raise ValueError(f"values has {len(values)} numbers, expected one per key ({K})")

    cell = max(ROW_PITCH, min(34.0, 300.0 / K, 300.0 / Q))  # a row stays a target a finger can tap
    size = 12.0
    left = 8 + max(text_width(s, size) for rs in row_sets for s in rs)
    if values is not None:  # room for the values' label, left of the map as the rows' labels
        left = max(left, 14 + text_width(say("attention.values"), 10))
    top = 14 + 0.72 * max(text_width(s, size) for cs in column_sets for s in cs)  # labels at 45 degrees
    # wide enough for the map and its last column's label (at 45 degrees); the words below wrap to it
    width = max(left + K * cell + 8, left + (K - 0.5) * cell + 0.72 * text_width(column_sets[0][-1], size) + 4)
    bars_words = say(f"{words}.bars", row=row_title, column=column_title)
    hint = say(f"{words}.hint", row=row_title, column=column_title)
    bars_lines, hint_lines = len(wrap(bars_words, 10, width - left - 8)), len(wrap(hint, 10, width - 16))
    bars_top = top + Q * cell + 26 + 13 * (bars_lines - 1)
    bar_height = 64.0
    values_row = 18.0 if values is not None else 0.0
    height = bars_top + bar_height + values_row + 9 + 13 * hint_lines
    view = w.reshape(-1, Q, K)
    first = view[0]

    parts = []
    for j, label in enumerate(column_sets[0]):
        parts.append(column_label(left + (j + 0.5) * cell, top - 6, label, size, class_="col-label", data_col=str(j)))
    for i, label in enumerate(row_sets[0]):
        aria = say(f"{words}.row_aria", row=row_title, label=label)
        for j in range(K):
            parts.append(el("rect", x=left + j * cell, y=top + i * cell, width=cell, height=cell,
                            fill=blues(float(first[i, j]) / top_colour), class_="cell", data_row=str(i), data_col=str(j)))  # fmt: skip
        parts.append(row_target(0, top + i * cell, left + K * cell, cell, i))
        parts.append(row_label(left - 6, top + (i + 0.5) * cell + size * 0.35, label, size, i, aria))
        if cell >= 30 and K <= 8:  # room to print each weight in its cell
            for j in range(K):
                v = float(first[i, j])
                parts.append(text(left + (j + 0.5) * cell, top + (i + 0.5) * cell + 4, number(v, ".2f"), 11, "middle",
                                  class_="cell-text", data_row=str(i), data_col=str(j),
                                  fill="white" if v / top_colour > 0.6 else INK, pointer_events="none"))  # fmt: skip
    parts.append(outline(left, top, K * cell, cell))
    # the bars: the pointed row's weights, each under its key's column
    base = bars_top + bar_height
    parts.append(el("line", x1=left, x2=left + K * cell, y1=base, y2=base, stroke=MUTED, stroke_width=1))
    parts.append(lines(left, bars_top - 2 - 13 * (bars_lines - 1), bars_words, 10, width - left - 8, fill=MUTED)[0])
    parts.append(text(left - 6, base, number(0), 10, "end", fill=MUTED))
    parts.append(text(left - 6, bars_top + 22, number(1), 10, "end", fill=MUTED))
    for j in range(K):
        v = float(first[0, j])
        h = (bar_height - 14) * v
        bar_title = el("title", say("attention.bar", key=column_sets[0][j], weight=number(v, ".3f")))
        parts.append(el("rect", bar_title, x=left + j * cell + 2, y=base - h, width=cell - 4, height=h, fill=SERIES[0],
                        class_="bar", data_col=str(j), data_weight=number(v, ".3f")))  # fmt: skip
        if cell >= 30:  # room to print each weight above its bar
            parts.append(text(left + (j + 0.5) * cell, base - h - 3, number(v, ".2f"), 10, "middle", class_="bar-text",
                              data_col=str(j)))  # fmt: skip
    if values is not None:
        parts.append(text(left - 6, base + 14, say("attention.values"), 10, "end", fill=MUTED))
        for j, v in enumerate(values):
            parts.append(text(left + (j + 0.5) * cell, base + 14, number(float(v), "g"), 10, "middle"))
    parts.append(lines(8, height - 6 - 13 * (hint_lines - 1), hint, 10, width - 16, fill=MUTED)[0])

    data = {
        "Q": Q, "K": K, "cell": cell, "top": top, "left": left, "base": base, "barh": bar_height - 14,
        "shape": list(w.shape[:-2]), "w": [round(x * 1000) for x in view.flatten().tolist()],
        "rows": row_sets, "cols": column_sets, "values": None if values is None else [float(v) for v in values],
        "row_title": row_title, "column_title": column_title, "vmax": top_colour,
    }  # fmt: skip
    controls = join(select(label, options, k) for k, (label, options) in enumerate(selectors))
    views = say("common.list").join(say("attention.view", label=label, option=str(o[0])) for label, o in selectors)
    readout = _readout(first[0], row_title, column_title, row_sets[0][0], column_sets[0],
                       say("attention.views", views=views) if selectors else "", words)  # fmt: skip
    if values is not None:
        output = sum(float(a) * float(v) for a, v in zip(first[0], values))  # o = Σ_j α_0j v_j
        readout += say("attention.output", output=number(output, ".2f"))
    return Explorer(name, join(parts), width=width, height=height, data=data, script=_SCRIPT,
                    controls=controls, readout=readout, words=words, call=call)  # fmt: skip


def _readout(
    weights: torch.Tensor,
    row_title: str,
    column_title: str,
    label: str,
    columns: list[str],
    views: str,
    words: str = "attention",
) -> str:
    """The line below the figure for one row of weights: the key with the most weight, or, where several
    tie (to the three decimals the data keeps: 0.5 and 0.5, four times 0.25), all of them; ``equal
    weight on all`` where every key ties, the row that shows no preference."""
    w = [round(float(x) * 1000) / 1000 for x in weights]  # the data's precision: the script compares the same
    top = max(range(len(w)), key=lambda j: (w[j], -j))
    tied = [j for j in range(len(w)) if w[top] - w[j] < 0.0015]
    values = dict(row=row_title, label=label, views=views, key=columns[top], weight=number(w[top], ".2f"),
                  sum=number(float(weights.sum()), ".2f"), n=number(len(w)), column=column_title,
                  keys=say("common.list").join(say("attention.quoted", key=columns[j]) for j in tied))  # fmt: skip
    entry = "readout_even" if len(tied) == len(w) > 1 else "readout_tie" if len(tied) > 1 else "readout"
    return say(f"{words}.{entry}", **values)
