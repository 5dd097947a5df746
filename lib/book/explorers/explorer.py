"""The one cell output every explorer is: its element, style, figure, readout, data and script."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping

import torch

from .draw import BLOCKED, BLUES, FONT, HIGHLIGHT, INK, SERIES
from .kit import Html, check_name, el, escape, js, number, script, script_json, style
from .words import for_script, say

MAX_BYTES = 300_000  # what one page may carry; an explorer larger than this is refused
# How an explorer was drawn, as data beside its HTML (like lib.claim's): the site in another language
# draws it again from this, in that language (tools/i18n_ext/outputs.py), instead of running the chapter again.
EXPLORER_MIME = "application/vnd.transformers-book.explorer+json"
_NOTHING = Html()  # no controls

# Shared by every explorer's script: the colour map, the words, ways to find elements, to write a number
# and to fill a template, and the pointing at rows (by pointer and by keyboard) of the heatmaps.
_JS_COMMON = (
    "function blues(x){x=Math.min(Math.max(x,0),1)*(B.length-1);const i=Math.min(Math.floor(x),B.length-2),"
    "f=x-i,a=B[i],b=B[i+1];let s='#';for(let c=1;c<7;c+=2){const p=parseInt(a.substr(c,2),16),"
    "q=parseInt(b.substr(c,2),16);s+=Math.round(p+(q-p)*f).toString(16).padStart(2,'0');}return s;}"
    "const $=(s)=>root.querySelector(s),$$=(s)=>Array.from(root.querySelectorAll(s));"
    "function fmt(x,d){return (Math.abs(x)<Math.pow(10,-d)/2?0:x).toFixed(d).replace('-','\\u2212');}"
    "function say(k,v){return S[k].replace(/\\{(\\w+)\\}/g,(m,n)=>String(v[n]));}"
    "function keys(el,n,pick){el.addEventListener('keydown',(e)=>{const i=+el.dataset.index;"
    "const to={ArrowDown:i+1,ArrowRight:i+1,ArrowUp:i-1,ArrowLeft:i-1,Home:0,End:n-1}[e.key];"
    "if(to===undefined)return;e.preventDefault();const t=Math.min(Math.max(to,0),n-1);pick(t);"
    "const next=root.querySelector(el.tagName+'[data-index=\"'+t+'\"]');if(next)next.focus();});}"
    "function rows(n,pick){$$('text.row-label').forEach((t)=>{const i=+t.dataset.index;"
    "['mouseenter','focus','click'].forEach((ev)=>t.addEventListener(ev,()=>pick(i)));keys(t,n,pick);});"
    "$$('rect.cell').forEach((e)=>{e.addEventListener('mouseenter',()=>pick(+e.dataset.row));});"
    "$$('rect.row-target').forEach((e)=>{['mouseenter','click'].forEach((ev)=>"
    "e.addEventListener(ev,()=>pick(+e.dataset.row)));});}"
    "function current(i){$$('text.row-label').forEach((t)=>"
    "t.setAttribute('aria-current',+t.dataset.index===i?'true':'false'));}"
)


class Explorer:
    """One interactive figure: ``_repr_html_`` is the whole output (HTML, SVG, JSON, JavaScript).

    ``name`` (``[A-Za-z0-9_-]+``) goes into ``data-explorer`` and the element's id; ``svg`` is the figure
    in its first state and ``controls`` the inputs above it, both :class:`~.kit.Html`; ``readout`` the
    first text of the line below it; ``data`` the JSON the script reads (as ``data``); ``script`` the
    explorer's own JavaScript, run with ``root`` (the explorer's element), ``S`` (the entries of
    :mod:`.words` for ``words``, the explorer's kind), ``C`` (the colours) and :data:`_JS_COMMON`'s
    helpers in scope; ``width`` and ``height`` the SVG's size in px. The figure is always shown at that
    size, so its text keeps the size it was set in (10 px and up); a screen narrower than the figure
    scrolls it inside its box, never the page.
    """

    def __init__(self, name: str, svg: Html, *, width: float, height: float, data: object, script: str,
                 controls: Html = _NOTHING, readout: str = "", words: str = "common", call: dict | None = None,
                 ) -> None:  # fmt: skip
        self.name, self.call = check_name(name), call
        svg, controls = escape(svg), escape(controls)
        payload = json.dumps(data, separators=(",", ":"), allow_nan=False)
        digest = hashlib.sha1("".join((payload, svg, controls)).encode()).hexdigest()  # str.join: nothing escaped
        self.id = f"explorer-{name}-{digest[:10]}"
        figure = el("svg", svg, xmlns="http://www.w3.org/2000/svg", viewBox=f"0 0 {number(width)} {number(height)}",
                    width=width, height=height, font_family=FONT, role="group", aria_label=say("common.figure", name=name))  # fmt: skip
        parts = [_style(self.id, width)]
        if controls:
            parts.append(el("div", controls, class_="explorer-controls"))
        parts += [
            el("div", figure, class_="explorer-figure"),
            el("p", readout, class_="explorer-readout", aria_live="polite"),
            _script_of(self.id, data, script, words),
        ]
        self.html = el("div", *parts, class_="lib-explorer", data_explorer=name, id=self.id)
        if len(self.html.encode()) > MAX_BYTES:
            raise ValueError(f"the {name} explorer is {len(self.html.encode()):,} bytes, over {MAX_BYTES:,}: "
                             "show fewer views or shorter sequences")  # fmt: skip

    def _repr_html_(self) -> str:
        return self.html

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        """The HTML, a line for consoles and, if the explorer says how it was drawn (``call``), that."""
        bundle = {"text/html": self.html, "text/plain": repr(self)}
        if self.call is not None:
            bundle[EXPLORER_MIME] = self.call
        return bundle

    def __repr__(self) -> str:  # what consoles (and nbval) see
        return f"<{self.name} explorer: {len(self.html.encode()):,} bytes of HTML>"


def _style(id: str, width: float) -> Html:
    """The explorer's style sheet, every rule scoped to its element's id; ``--explorer-width``, its
    figure's size, tells the book's style sheet how far the figure may shrink on a phone."""
    rules = [
        # its own light ground: the figure's colours and ink are drawn for it, also on a dark page
        f"{{font:13px/1.45 {FONT};color:{INK};background:#ffffff;margin:.3em 0 .8em;padding:.3em .5em;border-radius:4px;"
        f"--explorer-width:{number(width, '.0f')}px}}",
        " .explorer-controls{display:flex;flex-wrap:wrap;gap:.3em 1.4em;align-items:center;margin:0 0 .35em}",
        # each control a target of at least 24 x 24 px, on a phone too (WCAG 2.2, 2.5.8): a menu and a
        # slider are 24 px high; a check box is tapped through its label, which is
        " .explorer-controls label{display:inline-flex;gap:.4em;align-items:center;min-height:24px}",
        f" .explorer-controls select,#{id} .explorer-controls input{{font:inherit}}",
        f" .explorer-controls select,#{id} .explorer-controls input[type=range]{{min-height:24px;min-width:24px}}",
        " .explorer-controls input[type=checkbox]{width:16px;height:16px;margin:0}",
        " .explorer-figure{display:block;overflow-x:auto;margin:0;padding:0}",
        " svg{display:block;max-width:none}",
        f" [data-index],#{id} .row-target{{cursor:pointer}}",
        f" [data-index]:focus{{outline:2px solid {HIGHLIGHT};outline-offset:1px}}",
        " .explorer-readout{margin:.35em 0 0;min-height:1.45em}",
        # a source string in the controls: the explorer's own ink, not the theme's code colours (pale pink
        # on grey in dark mode, on the explorer's light background)
        f" code{{color:{INK};background:#f2f2f2;padding:0 .25em;border-radius:3px;font-size:95%}}",
    ]
    return style(
        "".join(f"#{id}{rule}" for rule in rules) + f"@media print{{#{id} .explorer-controls{{display:none}}}}"
    )


def _script_of(id: str, data: object, code: str, words: str) -> Html:
    """The data (JSON) and the code that reads it: the explorer's ``code`` after the common helpers."""
    colours = {"ink": INK, "highlight": HIGHLIGHT, "series": SERIES, "blocked": BLOCKED}
    start = (
        "(function(){const root=document.currentScript&&document.currentScript.closest('[data-explorer]')"
        f"||document.getElementById({js(id)});if(!root||root.dataset.ready)return;"
        "root.dataset.ready='1';const data=JSON.parse(root.querySelector('script.data').textContent);"
        f"const B={js(BLUES)},C={js(colours)},S={js(for_script(words))};"
    )
    return script(script_json(data), type="application/json", class_="data") + script(
        f"{start}{_JS_COMMON}{code}}})();"
    )


def call_of(explorer: str, terms: list[str], **args: object) -> dict:
    """How an explorer was drawn: its function's name, its arguments as JSON (a tensor as
    ``{"__tensor__": values, "dtype": ...}``, a mapping as ``{"__items__": [[key, value], ...]}``, in its
    order: a notebook stores JSON objects with their keys sorted, and a menu's options follow the
    order of the mapping the chapter gave) and the chapter's own words it shows (``terms``, which a
    translation catalog needs)."""
    return {"explorer": explorer, "args": {k: _as_json(v) for k, v in args.items()}, "terms": sorted(set(terms))}


def _as_json(value: object) -> object:
    if isinstance(value, torch.Tensor):
        values = value.detach().cpu().tolist()
        if value.dtype in (torch.float32, torch.float16, torch.bfloat16):  # 9 digits give a float32 back exactly
            values = _shorter(values)
        return {"__tensor__": values, "dtype": str(value.dtype).removeprefix("torch.")}
    if isinstance(value, Mapping):
        return {"__items__": [[str(k), _as_json(v)] for k, v in value.items()]}
    if isinstance(value, (list, tuple)):
        return [_as_json(v) for v in value]
    if hasattr(value, "tolist"):  # a NumPy array or number
        return _as_json(value.tolist())
    return value


def _shorter(values: object) -> object:
    return [_shorter(v) for v in values] if isinstance(values, list) else float(f"{values:.9g}")


def from_json(value: object) -> object:
    """The arguments of :func:`call_of` back: tensors as tensors, mappings in their order."""
    if isinstance(value, dict) and "__tensor__" in value:
        return torch.tensor(value["__tensor__"], dtype=getattr(torch, value["dtype"]))
    if isinstance(value, dict) and "__items__" in value:
        return {k: from_json(v) for k, v in value["__items__"]}
    if isinstance(value, dict):
        return {k: from_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [from_json(v) for v in value]
    return value
