"""Explorers: figures a reader can point at, on the site, in Colab and in Jupyter, with no server.

An explorer is one cell output, made from the run's own tensors:

- an SVG figure drawn here, in Python, in its first state: what print and readers without
  JavaScript see, a complete static figure;
- the numbers behind every other state, as JSON inside the output;
- a few lines of inline JavaScript that redraw parts of that SVG when the reader moves a control.

Nothing is loaded from another file or host (no CDN, no server, no widget state), so the same output
works on the built site offline, in Colab (which shows each output in its own frame) and in Jupyter.

The root element carries ``data-explorer="NAME"``. The controls are labelled ``<select>``,
``<input type="range">`` and ``<input type="checkbox">`` elements, and SVG elements marked
``data-index`` that respond to the pointer and to the keyboard (Tab to reach one, arrow keys to move).
The line below the figure (``class="explorer-readout"``, read out by screen readers) says in words what is
shown. Colours are the book's: ``Blues`` for attention weights, as :func:`lib.plot_attention`.
"""

from __future__ import annotations

import hashlib
import html
import json
import math
from collections.abc import Mapping, Sequence

import torch

from .palette import PALETTE

FONT = "DejaVu Sans, Arial, Helvetica, sans-serif"  # matplotlib's default first, as the static figures
INK, MUTED, GRID = "#222222", "#666666", "#d9d9d9"
HIGHLIGHT = PALETTE[1]  # the palette's orange: what the reader is pointing at
SERIES = list(PALETTE[:5])  # the first five colours of the plots
# matplotlib's Blues: the nine ColorBrewer colours it interpolates linearly between
BLUES = ["#f7fbff", "#deebf7", "#c6dbef", "#9ecae1", "#6baed6", "#4292c6", "#2171b5", "#08519c", "#08306b"]
MAX_BYTES = 300_000  # what one page may carry; an explorer larger than this is refused


def blues(x: float) -> str:
    """The ``Blues`` colour of ``x`` in [0, 1] as ``#rrggbb`` (the JavaScript ``blues`` computes the same)."""
    x = min(max(x, 0.0), 1.0) * (len(BLUES) - 1)
    i = min(int(x), len(BLUES) - 2)
    a, b = (bytes.fromhex(c[1:]) for c in BLUES[i : i + 2])
    return "#" + "".join(f"{int(p + (q - p) * (x - i) + 0.5):02x}" for p, q in zip(a, b))


# Shared by every explorer's script: the colour map and a way to set an element's text.
_JS_COMMON = (
    f"const B={json.dumps(BLUES)};"
    "function blues(x){x=Math.min(Math.max(x,0),1)*(B.length-1);const i=Math.min(Math.floor(x),B.length-2),"
    "f=x-i,a=B[i],b=B[i+1];let s='#';for(let c=1;c<7;c+=2){const p=parseInt(a.substr(c,2),16),"
    "q=parseInt(b.substr(c,2),16);s+=Math.round(p+(q-p)*f).toString(16).padStart(2,'0');}return s;}"
    "const $=(s)=>root.querySelector(s),$$=(s)=>Array.from(root.querySelectorAll(s));"
    "function fmt(x,d){return (Math.abs(x)<Math.pow(10,-d)/2?0:x).toFixed(d).replace('-','\\u2212');}"
    "function keys(el,n,pick){el.addEventListener('keydown',(e)=>{const i=+el.dataset.index;"
    "const to={ArrowDown:i+1,ArrowRight:i+1,ArrowUp:i-1,ArrowLeft:i-1,Home:0,End:n-1}[e.key];"
    "if(to===undefined)return;e.preventDefault();const t=Math.min(Math.max(to,0),n-1);pick(t);"
    "const next=root.querySelector(el.tagName+'[data-index=\"'+t+'\"]');if(next)next.focus();});}"
)


def _number(x: float) -> str:
    """A coordinate for SVG: at most two decimals, no trailing zeros."""
    return f"{x:.2f}".rstrip("0").rstrip(".")


def _attrs(attributes: Mapping[str, object]) -> str:
    parts = []
    for key, value in attributes.items():
        if value is None or value is False:
            continue
        name = key.rstrip("_").replace("_", "-")
        text = _number(value) if isinstance(value, float) else str(value)
        parts.append(f' {name}="{html.escape(text, quote=True)}"')
    return "".join(parts)


def el(tag: str, content: str = "", **attributes: object) -> str:
    """One SVG or HTML element, its attributes escaped (``class_`` for ``class``, ``data_index`` for
    ``data-index``), its content inserted as given (escape text with :func:`text`)."""
    return f"<{tag}{_attrs(attributes)}>{content}</{tag}>"


def text(x: float, y: float, content: str, size: float = 12, anchor: str = "start", **attributes: object) -> str:
    """An SVG ``<text>`` at ``(x, y)`` (its baseline), in the book's font and ink, ``size`` px."""
    attributes = {"fill": INK, **attributes}
    return el("text", html.escape(content), x=float(x), y=float(y), font_size=size, text_anchor=anchor, **attributes)


def text_width(content: str, size: float = 12) -> float:
    """A generous width of ``content`` set at ``size`` px (0.65 em a character, 1 em for an arrow or
    a CJK character): enough to lay out labels."""
    return size * sum(1.0 if ord(c) > 0x2000 else 0.65 for c in content)


class Explorer:
    """One interactive figure: ``_repr_html_`` is the whole output (HTML, SVG, JSON, JavaScript).

    ``name`` goes into ``data-explorer``; ``svg`` is the figure in its first state; ``controls`` the
    HTML of the inputs above it; ``readout`` the first text of the line below it; ``data`` the JSON the
    script reads (as ``data``); ``script`` the explorer's own JavaScript, run with ``root`` (the
    explorer's element) and :data:`_JS_COMMON`'s helpers in scope; ``width`` and ``height`` the SVG's
    size in px. The figure is always shown at that size, so its text keeps the size it was set in
    (10 px and up); a screen narrower than the figure scrolls it inside its box, never the page.
    """

    def __init__(self, name: str, svg: str, *, width: float, height: float, data: object, script: str,
                 controls: str = "", readout: str = "") -> None:  # fmt: skip
        self.name = name
        payload = json.dumps(data, separators=(",", ":"), allow_nan=False)
        embedded = payload.replace("</", "<\\/")  # no "</script>" inside the data
        self.id = f"explorer-{name}-" + hashlib.sha1((payload + svg + controls).encode()).hexdigest()[:10]
        style = (
            f"#{self.id}{{font:13px/1.45 {FONT};color:{INK};margin:.3em 0 .8em}}"
            f"#{self.id} .explorer-controls{{display:flex;flex-wrap:wrap;gap:.3em 1.4em;align-items:center;"
            "margin:0 0 .35em}"
            f"#{self.id} .explorer-controls label{{display:inline-flex;gap:.4em;align-items:center}}"
            f"#{self.id} .explorer-controls select,#{self.id} .explorer-controls input{{font:inherit}}"
            f"#{self.id} .explorer-figure{{display:block;overflow-x:auto;margin:0;padding:0}}"
            f"#{self.id} svg{{display:block;max-width:none}}"
            f"#{self.id} [data-index]{{cursor:pointer}}"
            f"#{self.id} [data-index]:focus{{outline:2px solid {HIGHLIGHT};outline-offset:1px}}"
            f"#{self.id} .explorer-readout{{margin:.35em 0 0;min-height:1.45em}}"
            f"@media print{{#{self.id} .explorer-controls{{display:none}}}}"
        )
        figure = (
            f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {_number(width)} {_number(height)}" '
            f'width="{_number(width)}" height="{_number(height)}" font-family="{FONT}" role="img" '
            f'aria-label="{html.escape(name)} explorer">{svg}</svg>'
        )
        code = (
            "(function(){const root=document.currentScript&&document.currentScript.closest('[data-explorer]')"
            f"||document.getElementById('{self.id}');if(!root||root.dataset.ready)return;"
            "root.dataset.ready='1';const data=JSON.parse(root.querySelector('script.data').textContent);"
            f"{_JS_COMMON}{script}}})();"
        )
        self.html = (
            f'<div class="lib-explorer" data-explorer="{html.escape(name)}" id="{self.id}">'
            f"<style>{style}</style>"
            + (f'<div class="explorer-controls">{controls}</div>' if controls else "")
            + f'<div class="explorer-figure">{figure}</div>'
            f'<p class="explorer-readout" aria-live="polite">{readout}</p>'
            f'<script type="application/json" class="data">{embedded}</script>'
            f"<script>{code}</script></div>"
        )
        if len(self.html.encode()) > MAX_BYTES:
            raise ValueError(f"the {name} explorer is {len(self.html.encode()):,} bytes, over {MAX_BYTES:,}: "
                             "show fewer views or shorter sequences")  # fmt: skip

    def _repr_html_(self) -> str:
        return self.html

    def __repr__(self) -> str:  # what consoles (and nbval) see
        return f"<{self.name} explorer: {len(self.html.encode()):,} bytes of HTML>"


def _select(label: str, options: Sequence[str], index: int) -> str:
    items = "".join(el("option", html.escape(str(o)), value=str(i)) for i, o in enumerate(options))
    return el("label", html.escape(label) + " " + el("select", items, data_selector=str(index), data_label=label))


# ---------------------------------------------------------------------------------------------------
# Attention weights: a heatmap whose rows can be pointed at (chapters 2, 4 and 9)


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
) -> Explorer:
    r"""Attention weights ``[*S, T_q, T_k]`` as a heatmap: point at a query (its row) to see its weights
    :math:`\alpha_{ij}` over the keys as bars below the map, and their sum; with ``values`` (one number
    per key), the output they average to, :math:`o_i = \sum_j \alpha_{ij} v_j`.

    ``selectors`` name the leading dimensions ``S`` (a label and one option name per index), shown as
    ``<select>`` menus: e.g. ``[("layer", ["0", "1"]), ("head", ["0", "1", "2"])]`` for ``[2, 3, T, T]``.
    ``rows`` and ``columns`` label the queries and keys; a list of label lists gives one per option of
    the first selector (e.g. one per sentence, of equal lengths). The colours run from 0 to ``vmax``
    (default: the largest weight of all views), as :func:`lib.plot_attention`'s; the bars from 0 to 1.
    """
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

    cell = max(16.0, min(34.0, 300.0 / K, 300.0 / Q))
    size = 12.0 if cell >= 24 else 10.0
    left = 8 + max(text_width(s, size) for rs in row_sets for s in rs)
    top = 14 + 0.72 * max(text_width(s, size) for cs in column_sets for s in cs)  # labels at 45 degrees
    bars_top = top + Q * cell + 26
    bar_height = 64.0
    values_row = 18.0 if values is not None else 0.0
    hint = f"Point at a {row_title} (a row) to see its weights over the {column_title}s."
    width = max(left + K * cell + 8, left + text_width(hint, 10) * 0.9)
    height = bars_top + bar_height + values_row + 22
    view = w.reshape(-1, Q, K)
    first = view[0]

    parts = []
    for j, label in enumerate(column_sets[0]):
        x, y = left + (j + 0.5) * cell, top - 6
        parts.append(
            text(x, y, label, size, class_="col-label", data_col=str(j), transform=f"rotate(-45 {x:.1f} {y:.1f})")
        )
    for i, label in enumerate(row_sets[0]):
        parts.append(text(left - 6, top + (i + 0.5) * cell + size * 0.35, label, size, "end", class_="row-label",
                          data_index=str(i), tabindex="0", role="button",
                          aria_label=f"{row_title} {label}: show its weights"))  # fmt: skip
        for j in range(K):
            parts.append(el("rect", x=left + j * cell, y=top + i * cell, width=cell, height=cell,
                            fill=blues(float(first[i, j]) / top_colour), class_="cell", data_row=str(i), data_col=str(j)))  # fmt: skip
        if cell >= 30 and K <= 8:  # room to print each weight in its cell
            for j in range(K):
                v = float(first[i, j])
                parts.append(text(left + (j + 0.5) * cell, top + (i + 0.5) * cell + 4, f"{v:.2f}", 11, "middle",
                                  class_="cell-text", data_row=str(i), data_col=str(j),
                                  fill="white" if v / top_colour > 0.6 else INK, pointer_events="none"))  # fmt: skip
    parts.append(el("rect", x=left - 1, y=top - 1, width=K * cell + 2, height=cell + 2, fill="none",
                    stroke=HIGHLIGHT, stroke_width=2.5, class_="outline", pointer_events="none"))  # fmt: skip
    # the bars: the pointed row's weights, each under its key's column
    base = bars_top + bar_height
    parts.append(el("line", x1=left, x2=left + K * cell, y1=base, y2=base, stroke=MUTED, stroke_width=1))
    parts.append(text(left, bars_top - 2, f"the {row_title}'s weights over the {column_title}s", 10, fill=MUTED))
    parts.append(text(left - 6, base, "0", 10, "end", fill=MUTED))
    parts.append(text(left - 6, bars_top + 22, "1", 10, "end", fill=MUTED))
    for j in range(K):
        v = float(first[0, j])
        h = (bar_height - 14) * v
        parts.append(el("rect", el("title", html.escape(f"{column_sets[0][j]}: {v:.3f}")), x=left + j * cell + 2,
                        y=base - h, width=cell - 4, height=h, fill=SERIES[0], class_="bar", data_col=str(j),
                        data_weight=f"{v:.3f}"))  # fmt: skip
        if cell >= 30:  # room to print each weight above its bar
            parts.append(text(left + (j + 0.5) * cell, base - h - 3, f"{v:.2f}", 10, "middle", class_="bar-text",
                              data_col=str(j)))  # fmt: skip
    if values is not None:
        parts.append(text(left - 6, base + 14, "value vⱼ", 10, "end", fill=MUTED))
        for j, v in enumerate(values):
            parts.append(text(left + (j + 0.5) * cell, base + 14, f"{v:g}", 10, "middle"))
    parts.append(text(left, height - 6, hint, 10, fill=MUTED))

    data = {
        "Q": Q, "K": K, "cell": cell, "top": top, "left": left, "base": base, "barh": bar_height - 14,
        "shape": list(w.shape[:-2]), "w": [round(x * 1000) for x in view.flatten().tolist()],
        "rows": row_sets, "cols": column_sets, "values": None if values is None else [float(v) for v in values],
        "row_title": row_title, "vmax": top_colour,
    }  # fmt: skip
    controls = "".join(_select(label, options, k) for k, (label, options) in enumerate(selectors))
    script = """
const sel=$$('select[data-selector]');let view=0,row=0;
function W(i,j){return data.w[(view*data.Q+i)*data.K+j]/1000;}
function pick(i){row=i;const y=data.top+i*data.cell-1;$('.outline').setAttribute('y',y);let sum=0,out=0;
const labels=data.rows[data.rows.length>1?+sel[0].value:0],keys=data.cols[data.cols.length>1?+sel[0].value:0];
$$('text.row-label').forEach((t)=>t.setAttribute('aria-current',+t.dataset.index===i?'true':'false'));
for(let j=0;j<data.K;j++){const v=W(i,j),h=data.barh*v;sum+=v;if(data.values)out+=v*data.values[j];
const b=$('rect.bar[data-col="'+j+'"]');b.setAttribute('y',data.base-h);b.setAttribute('height',h);
b.dataset.weight=v.toFixed(3);b.firstChild.textContent=keys[j]+': '+v.toFixed(3);
const t=$('text.bar-text[data-col="'+j+'"]');if(t){t.setAttribute('y',data.base-h-3);t.textContent=fmt(v,2);}}
let top=0;for(let j=1;j<data.K;j++)if(W(i,j)>W(i,top))top=j;
let s=data.row_title+' \u201c'+labels[i]+'\u201d';
if(sel.length)s+=' ('+sel.map((x)=>x.dataset.label+' '+x.options[x.selectedIndex].text).join(', ')+')';
s+=': most weight on \u201c'+keys[top]+'\u201d ('+fmt(W(i,top),2)+'); weights sum to '+fmt(sum,2);
if(data.values)s+='; output o = \u03a3 \u03b1\u2c7c v\u2c7c = '+fmt(out,2);
$('.explorer-readout').textContent=s;root.dataset.row=i;root.dataset.sum=sum;if(data.values)root.dataset.output=out;
root.dataset.weights=JSON.stringify(Array.from({length:data.K},(_,j)=>W(i,j)));}
function draw(){view=0;sel.forEach((s,k)=>{view=view*data.shape[k]+(+s.value);});
const r=data.rows[data.rows.length>1?+sel[0].value:0],c=data.cols[data.cols.length>1?+sel[0].value:0];
$$('text.row-label').forEach((t)=>{t.textContent=r[+t.dataset.index];
t.setAttribute('aria-label',data.row_title+' '+r[+t.dataset.index]+': show its weights');});
$$('text.col-label').forEach((t)=>{t.textContent=c[+t.dataset.col];});
$$('rect.cell').forEach((e)=>{e.setAttribute('fill',blues(W(+e.dataset.row,+e.dataset.col)/data.vmax));});
$$('text.cell-text').forEach((e)=>{const v=W(+e.dataset.row,+e.dataset.col);e.textContent=fmt(v,2);
e.setAttribute('fill',v/data.vmax>0.6?'white':'#222222');});root.dataset.view=view;pick(row);}
$$('text.row-label').forEach((t)=>{const i=+t.dataset.index;['mouseenter','focus','click'].forEach((ev)=>
t.addEventListener(ev,()=>pick(i)));keys(t,data.Q,pick);});
$$('rect.cell').forEach((e)=>{e.addEventListener('mouseenter',()=>pick(+e.dataset.row));});
sel.forEach((s)=>s.addEventListener('change',draw));draw();
"""
    labels = row_sets[0]
    top = int(first[0].argmax())
    where = ", ".join(f"{label} {options[0]}" for label, options in selectors)
    readout = html.escape(
        f"{row_title} “{labels[0]}”" + (f" ({where})" if where else "")
        + f": most weight on “{column_sets[0][top]}” ({float(first[0, top]):.2f}); weights sum to {float(first[0].sum()):.2f}"
    )  # fmt: skip
    if values is not None:
        readout += html.escape(f"; output o = Σ αⱼ vⱼ = {sum(float(a) * v for a, v in zip(first[0], values)):.2f}")
    return Explorer(name, "".join(parts), width=width, height=height, data=data, script=script,
                    controls=controls, readout=readout)  # fmt: skip


# ---------------------------------------------------------------------------------------------------
# Masks: which keys each query may see (chapter 5)


def mask_explorer(tokens: Sequence[str], lookahead: torch.Tensor, padding: torch.Tensor, *,
                  name: str = "masks") -> Explorer:  # fmt: skip
    """Which key ``j`` (column) each query ``i`` (row) of ``tokens`` may attend to, with the look-ahead
    mask and the padding mask each switched on or off by a checkbox. Both masks are ``lib``'s own:
    ``lookahead`` ``[T, T]`` and ``padding`` (broadcast to ``[T, T]``), ``True`` where attention is
    allowed; with both on, a pair is allowed only where both allow it (their conjunction).
    Point at a row to read which keys its query sees."""
    T = len(tokens)
    look, pad = torch.as_tensor(lookahead).bool().cpu(), torch.as_tensor(padding).bool().cpu()
    try:
        pad = pad.broadcast_to((T, T))
    except RuntimeError:
        pad = None
    if pad is None or look.shape != (T, T):
        raise ValueError(f"lookahead must be [T, T] and padding broadcast to [T, T] with T={T} tokens, "
                         f"got {list(look.shape)} and {list(torch.as_tensor(padding).shape)}")  # fmt: skip
    cell, size = 34.0, 12.0
    left = 10 + max(text_width(t, size) for t in tokens)
    top = 14 + 0.72 * max(text_width(t, size) for t in tokens)
    width, height = max(left + T * cell + 12, 380.0), top + T * cell + 28
    allowed = look & pad
    parts = []
    for j, token in enumerate(tokens):
        x, y = left + (j + 0.5) * cell, top - 6
        parts.append(text(x, y, token, size, transform=f"rotate(-45 {x:.1f} {y:.1f})"))
    for i, token in enumerate(tokens):
        parts.append(text(left - 6, top + (i + 0.5) * cell + 4, token, size, "end", class_="row-label", data_index=str(i),
                          tabindex="0", role="button", aria_label=f"query {i} ({token}): which keys it sees"))  # fmt: skip
        for j in range(T):
            ok = bool(allowed[i, j])
            parts.append(el("rect", x=left + j * cell + 1, y=top + i * cell + 1, width=cell - 2, height=cell - 2,
                            fill=blues(0.55) if ok else "#eeeeee", class_="cell", data_row=str(i), data_col=str(j)))  # fmt: skip
            parts.append(text(left + (j + 0.5) * cell, top + (i + 0.5) * cell + 4, "" if ok else "×", 12, "middle",
                              fill=MUTED, class_="mark", data_row=str(i), data_col=str(j), pointer_events="none"))  # fmt: skip
    parts.append(el("rect", x=left - 1, y=top - 1, width=T * cell + 2, height=cell + 2, fill="none",
                    stroke=HIGHLIGHT, stroke_width=2.5, class_="outline", pointer_events="none"))  # fmt: skip
    parts.append(text(left, height - 8, "blue: may attend · ×: masked (score set to −∞)", 10, fill=MUTED))
    controls = (el("label", el("input", type="checkbox", checked="checked", data_mask="look") + "look-ahead mask")
                + el("label", el("input", type="checkbox", checked="checked", data_mask="pad") + "padding mask"))  # fmt: skip
    data = {"T": T, "cell": cell, "top": top, "tokens": list(tokens), "look": look.int().tolist(),
            "pad": pad.int().tolist(), "on": blues(0.55)}  # fmt: skip
    script = """
const T=data.T;let row=0;const box=(m)=>$('input[data-mask="'+m+'"]');
function ok(i,j){return (!box('look').checked||data.look[i][j])&&(!box('pad').checked||data.pad[i][j]);}
function pick(i){row=i;$('.outline').setAttribute('y',data.top+i*data.cell-1);const seen=[];
$$('text.row-label').forEach((t)=>t.setAttribute('aria-current',+t.dataset.index===i?'true':'false'));
for(let j=0;j<T;j++)if(ok(i,j))seen.push(data.tokens[j]);let n=0;
for(let a=0;a<T;a++)for(let b=0;b<T;b++)if(ok(a,b))n++;
$('.explorer-readout').textContent='query '+i+' \u201c'+data.tokens[i]+'\u201d sees '+seen.length+' key'+(seen.length==1?'':'s')+
': '+seen.join(' ')+' \u00b7 '+n+' of '+T*T+' pairs allowed';root.dataset.row=i;root.dataset.seen=seen.length;
root.dataset.allowed=n;}
function draw(){$$('rect.cell').forEach((e)=>{const y=ok(+e.dataset.row,+e.dataset.col);
e.setAttribute('fill',y?data.on:'#eeeeee');});$$('text.mark').forEach((e)=>{
e.textContent=ok(+e.dataset.row,+e.dataset.col)?'':'\u00d7';});pick(row);}
$$('text.row-label').forEach((t)=>{const i=+t.dataset.index;['mouseenter','focus','click'].forEach((ev)=>
t.addEventListener(ev,()=>pick(i)));keys(t,T,pick);});
$$('rect.cell').forEach((e)=>{e.addEventListener('mouseenter',()=>pick(+e.dataset.row));});
$$('input[data-mask]').forEach((b)=>b.addEventListener('change',draw));draw();
"""
    seen = [tokens[j] for j in range(T) if allowed[0, j]]
    readout = html.escape(f"query 0 “{tokens[0]}” sees {len(seen)} key{'' if len(seen) == 1 else 's'}: "
                          f"{' '.join(seen)} · {int(allowed.sum())} of {T * T} pairs allowed")  # fmt: skip
    return Explorer(name, "".join(parts), width=width, height=height, data=data, script=script,
                    controls=controls, readout=readout)  # fmt: skip


# ---------------------------------------------------------------------------------------------------
# The softmax of growing scores (chapter 3)


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
        title = "scaled: softmax(e / √dₖ)" if way == "scaled" else "unscaled: softmax(e)"
        parts.append(text(x0, 16, title, 12, font_weight="bold"))
        for tick in (0.0, 0.5, 1.0):
            y = top + plot_h * (1 - tick)
            parts.append(el("line", x1=x0, x2=x0 + panel_w, y1=y, y2=y, stroke=GRID, stroke_width=1))
            parts.append(text(x0 - 4, y + 4, f"{tick:g}", 10, "end", fill=MUTED))
        for j in range(T):
            h = plot_h * float(weights[start, j])
            parts.append(el("rect", x=x0 + j * bar + 1, y=top + plot_h - h, width=bar - 2, height=h,
                            fill=SERIES[k], class_=f"bar {way}", data_col=str(j)))  # fmt: skip
        parts.append(text(x0, top + plot_h + 16, f"{T} keys, sorted by score", 10, fill=MUTED))
        stat = f"score spread (std) {data[way]['std'][start]:.2f} · largest weight {data[way]['max'][start]:.2f}"
        parts.append(text(x0, top + plot_h + 32, stat, 11, class_=f"stat {way}"))
    if mean_largest is not None:
        data["mean_largest"] = {way: [float(x) for x in mean_largest[way]] for way in ways}
    controls = el("label", f"d<sub>k</sub> = <b class='dk'>{d_ks[start]}</b>" + el(
        "input", type="range", min="0", max=str(len(d_ks) - 1), value=str(start), step="1",
        aria_label="dₖ, the width of queries and keys", aria_valuetext=f"dₖ = {d_ks[start]}"))  # fmt: skip
    script = """
const slider=$('input[type=range]');
function draw(){const n=+slider.value,d=data.d_ks[n];$('.dk').textContent=d;
slider.setAttribute('aria-valuetext','d\u2096 = '+d);
for(const way of ['scaled','unscaled']){const w=data[way].w[n];
$$('rect.bar.'+way).forEach((b)=>{const h=data.plot_h*w[+b.dataset.col];b.setAttribute('y',data.top+data.plot_h-h);
b.setAttribute('height',h);});$('text.stat.'+way).textContent='score spread (std) '+fmt(data[way].std[n],2)+
' \u00b7 largest weight '+fmt(data[way].max[n],2);}
let s='d\u2096 = '+d+': largest weight '+fmt(data.scaled.max[n],2)+' scaled, '+fmt(data.unscaled.max[n],2)+' unscaled';
if(data.mean_largest)s+=' (mean over many queries: '+fmt(data.mean_largest.scaled[n],2)+' and '+
fmt(data.mean_largest.unscaled[n],2)+')';$('.explorer-readout').textContent=s;root.dataset.dk=d;
root.dataset.scaledMax=data.scaled.max[n];root.dataset.unscaledMax=data.unscaled.max[n];}
slider.addEventListener('input',draw);draw();
"""
    svg = "".join(parts)
    readout = html.escape(f"dₖ = {d_ks[start]}: largest weight {data['scaled']['max'][start]:.2f} scaled, "
                          f"{data['unscaled']['max'][start]:.2f} unscaled")  # fmt: skip
    return Explorer(name, svg, width=width, height=height, data=data, script=script, controls=controls,
                    readout=readout)  # fmt: skip


# ---------------------------------------------------------------------------------------------------
# Similarity by offset (chapter 6)


def similarity_explorer(offsets: Sequence[int], curves: Mapping[str, Sequence[float]], *, ylabel: str = "similarity",
                        name: str = "positions") -> Explorer:  # fmt: skip
    """One curve per kind of position, ``curves[kind][n]`` its similarity at offset ``offsets[n]``: a menu
    picks the kind, a slider the offset δ, and the line below reads the value off the curve."""
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
        parts.append(text(left - 5, y + 4, f"{tick:.2g}", 10, "end", fill=MUTED))
    for n in range(0, len(offsets), max(1, len(offsets) // 5)):
        parts.append(text(x_of(n), top + plot_h + 15, str(offsets[n]), 10, "middle", fill=MUTED))
    parts.append(text(left + plot_w / 2, top + plot_h + 32, "offset δ", 11, "middle"))
    parts.append(text(12, top + plot_h / 2, ylabel, 11, "middle", transform=f"rotate(-90 12 {top + plot_h / 2:.1f})"))
    first = ys[kinds[0]]
    points = " ".join(f"{x_of(n):.1f},{y_of(v):.1f}" for n, v in enumerate(first))
    parts.append(el("polyline", points=points, fill="none", stroke=SERIES[0], stroke_width=2, class_="curve"))
    parts.append(el("line", x1=x_of(0), x2=x_of(0), y1=top, y2=top + plot_h, stroke=HIGHLIGHT, stroke_width=1,
                    stroke_dasharray="3 3", class_="cursor"))  # fmt: skip
    parts.append(el("circle", cx=x_of(0), cy=y_of(first[0]), r=4.5, fill=HIGHLIGHT, class_="dot"))
    data = {"offsets": list(offsets), "kinds": kinds, "ys": ys, "lo": lo, "hi": hi, "left": left, "top": top,
            "w": plot_w, "h": plot_h, "colors": SERIES, "ylabel": ylabel}  # fmt: skip
    controls = (_select("position", kinds, 0) + el("label", "offset δ = <b class='delta'>0</b>" + el(
        "input", type="range", min="0", max=str(len(offsets) - 1), value="0", step="1", aria_label="offset δ",
        aria_valuetext=f"δ = {offsets[0]}")))  # fmt: skip
    script = """
const kind=$('select'),slider=$('input[type=range]'),N=data.offsets.length;
const X=(n)=>data.left+data.w*n/Math.max(N-1,1),Y=(v)=>data.top+data.h*(data.hi-v)/((data.hi-data.lo)||1);
function draw(){const k=+kind.value,y=data.ys[data.kinds[k]],n=+slider.value,d=data.offsets[n];
$('.curve').setAttribute('points',y.map((v,i)=>X(i).toFixed(1)+','+Y(v).toFixed(1)).join(' '));
$('.curve').setAttribute('stroke',data.colors[k%data.colors.length]);
$('.cursor').setAttribute('x1',X(n));$('.cursor').setAttribute('x2',X(n));$('.dot').setAttribute('cx',X(n));
$('.dot').setAttribute('cy',Y(y[n]));$('.delta').textContent=d;slider.setAttribute('aria-valuetext','\u03b4 = '+d);
$('.explorer-readout').textContent=data.kinds[k]+', \u03b4 = '+d+': '+data.ylabel+' '+fmt(y[n],3);
root.dataset.kind=data.kinds[k];root.dataset.offset=d;root.dataset.value=y[n];}
kind.addEventListener('change',draw);slider.addEventListener('input',draw);draw();
"""
    readout = html.escape(f"{kinds[0]}, δ = {offsets[0]}: {ylabel} {first[0]:.3f}")
    return Explorer(name, "".join(parts), width=width, height=height, data=data, script=script,
                    controls=controls, readout=readout)  # fmt: skip


# ---------------------------------------------------------------------------------------------------
# Decoding, step by step (chapter 5)


def decoding_explorer(source: str, runs: Mapping[str, Sequence[Mapping[str, object]]], *,
                      name: str = "decoding") -> Explorer:  # fmt: skip
    r"""Step through the outputs of several decoding rules for one ``source``, side by side.

    ``runs[rule]`` lists the steps of that rule's output: each a mapping with ``token`` (the token it
    chose), ``p`` (the model's :math:`p(y_t \mid y_{<t}, x)` of that token) and ``top`` (the most likely
    next tokens at that step, as ``(token, p)`` pairs, most likely first). A slider moves through the
    steps; each column shows the output so far, the chosen token among the step's candidates, and
    :math:`\log p(y_{\le t} \mid x) = \sum_s \log p(y_s \mid y_{<s}, x)`.
    """
    rules = list(runs)
    steps = max(len(r) for r in runs.values())
    n_top = max(len(s["top"]) for r in runs.values() for s in r)
    col_w, row_h, top = 250.0, 19.0, 20.0
    width = 20 + col_w * len(rules)
    height = top + 30 + row_h * n_top + 44
    data = {"rules": rules, "runs": {}, "n_top": n_top, "col_w": col_w}
    parts = []
    for c, rule in enumerate(rules):
        x0 = 10 + c * col_w
        run = [{"token": str(s["token"]), "p": float(s["p"]), "top": [[str(t), float(p)] for t, p in s["top"]]}
               for s in runs[rule]]  # fmt: skip
        data["runs"][rule] = run
        parts.append(text(x0, 14, rule, 12, font_weight="bold"))
        parts.append(
            text(x0, top + 16, run[0]["token"], 13, class_=f"so-far r{c}", font_family="DejaVu Sans Mono, monospace")
        )
        parts.append(text(x0, top + 36, "candidates at this step:", 10, fill=MUTED))
        for k in range(n_top):
            y = top + 44 + k * row_h
            token, p = run[0]["top"][k] if k < len(run[0]["top"]) else ("", 0.0)
            chosen = token == run[0]["token"]
            parts.append(el("rect", x=x0 + 58, y=y, width=150 * p, height=row_h - 5,
                            fill=HIGHLIGHT if chosen else SERIES[0], class_=f"cand-bar r{c}", data_k=str(k)))  # fmt: skip
            parts.append(text(x0 + 52, y + 11, token, 11, "end", class_=f"cand-token r{c}", data_k=str(k)))
            parts.append(text(x0 + 62 + 150 * p, y + 11, f"{p:.2f}", 10, class_=f"cand-p r{c}", data_k=str(k)))
        logp = math.log(max(run[0]["p"], 1e-300))
        parts.append(text(x0, height - 10, f"log p so far: {logp:.2f}", 11, class_=f"logp r{c}"))
        data["runs"][rule] = run
    data["steps"] = steps
    controls = el("span", "source: " + el("code", html.escape(source))) + el("label", "step t = <b class='t'>1</b>" + el(
        "input", type="range", min="0", max=str(steps - 1), value="0", step="1", aria_label="decoding step t",
        aria_valuetext="t = 1"))  # fmt: skip
    script = """
const slider=$('input[type=range]');
function draw(){const t=+slider.value;$('.t').textContent=t+1;slider.setAttribute('aria-valuetext','t = '+(t+1));
const said=[];data.rules.forEach((rule,c)=>{const run=data.runs[rule];const s=run[Math.min(t,run.length-1)];
const done=t>=run.length;let lp=0;for(let i=0;i<=Math.min(t,run.length-1);i++)lp+=Math.log(Math.max(run[i].p,1e-300));
$('text.so-far.r'+c).textContent=run.slice(0,t+1).map((x)=>x.token).join(' ')+(done?'  (ended)':'');
for(let k=0;k<data.n_top;k++){const cand=s.top[k]||['',0],chosen=cand[0]===s.token&&!done;
const bar=$('rect.cand-bar.r'+c+'[data-k="'+k+'"]');bar.setAttribute('width',150*cand[1]);
bar.setAttribute('fill',chosen?'#de8f05':'#0173b2');$('text.cand-token.r'+c+'[data-k="'+k+'"]').textContent=cand[0];
const p=$('text.cand-p.r'+c+'[data-k="'+k+'"]');p.textContent=cand[0]?fmt(cand[1],2):'';p.setAttribute('x',
+bar.getAttribute('x')+4+150*cand[1]);}
$('text.logp.r'+c).textContent='log p so far: '+fmt(lp,2);root.dataset['logp'+c]=lp;
said.push(rule+' chose \u201c'+s.token+'\u201d (p = '+fmt(s.p,2)+'), log p so far '+fmt(lp,2));});
$('.explorer-readout').textContent='step '+(t+1)+': '+said.join('; ');root.dataset.step=t+1;}
slider.addEventListener('input',draw);draw();
"""
    readout = html.escape("step 1: " + "; ".join(
        f"{r} chose “{data['runs'][r][0]['token']}” (p = {data['runs'][r][0]['p']:.2f})" for r in rules))  # fmt: skip
    return Explorer(name, "".join(parts), width=width, height=height, data=data, script=script,
                    controls=controls, readout=readout)  # fmt: skip
