"""Decoding, step by step: several decoding rules side by side (chapter 5)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from .draw import HIGHLIGHT, MUTED, SERIES, slider, text
from .explorer import Explorer, call_of
from .kit import el, join, number
from .words import say, term

_SCRIPT = """
const slider=$('input[type=range]');
function draw(){const t=+slider.value;$('.t').textContent=t+1;slider.setAttribute('aria-valuetext',say('slider_value',{t:t+1}));
const said=[];data.rules.forEach((rule,c)=>{const run=data.runs[rule];const s=run[Math.min(t,run.length-1)];
const done=t>=run.length;let lp=0;for(let i=0;i<=Math.min(t,run.length-1);i++)lp+=Math.log(Math.max(run[i].p,1e-300));
$('text.so-far.r'+c).textContent=run.slice(0,t+1).map((x)=>x.token).join(' ')+(done?S.ended:'');
for(let k=0;k<data.n_top;k++){const cand=s.top[k]||['',0],chosen=cand[0]===s.token&&!done;
const bar=$('rect.cand-bar.r'+c+'[data-k="'+k+'"]');bar.setAttribute('width',150*cand[1]);
bar.setAttribute('fill',chosen?C.highlight:C.series[0]);$('text.cand-token.r'+c+'[data-k="'+k+'"]').textContent=cand[0];
const p=$('text.cand-p.r'+c+'[data-k="'+k+'"]');p.textContent=cand[0]?fmt(cand[1],2):'';p.setAttribute('x',
+bar.getAttribute('x')+4+150*cand[1]);}
$('text.logp.r'+c).textContent=say('logp',{logp:fmt(lp,2)});root.dataset['logp'+c]=lp;
said.push(say('chose',{rule:rule,token:s.token,p:fmt(s.p,2)})+say('so_far',{logp:fmt(lp,2)}));});
$('.explorer-readout').textContent=say('readout',{t:t+1,said:said.join(S.clauses)});root.dataset.step=t+1;}
slider.addEventListener('input',draw);draw();
"""


def decoding_explorer(source: str, runs: Mapping[str, Sequence[Mapping[str, object]]], *,
                      name: str = "decoding") -> Explorer:  # fmt: skip
    r"""Step through the outputs of several decoding rules for one ``source``, side by side.

    ``runs[rule]`` lists the steps of that rule's output: each a mapping with ``token`` (the token it
    chose), ``p`` (the model's :math:`p(y_t \mid y_{<t}, x)` of that token) and ``top`` (the most likely
    next tokens at that step, as ``(token, p)`` pairs, most likely first). A slider moves through the
    steps; each column shows the output so far, the chosen token among the step's candidates, and
    :math:`\log p(y_{\le t} \mid x) = \sum_s \log p(y_s \mid y_{<s}, x)`.
    """
    call = call_of("decoding_explorer", list(runs), source=source, runs=runs, name=name)
    runs = {term(rule): steps for rule, steps in runs.items()}
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
        parts.append(text(x0, top + 36, say("decoding.candidates"), 10, fill=MUTED))
        for k in range(n_top):
            y = top + 44 + k * row_h
            token, p = run[0]["top"][k] if k < len(run[0]["top"]) else ("", 0.0)
            chosen = token == run[0]["token"]
            parts.append(el("rect", x=x0 + 58, y=y, width=150 * p, height=row_h - 5,
                            fill=HIGHLIGHT if chosen else SERIES[0], class_=f"cand-bar r{c}", data_k=str(k)))  # fmt: skip
            parts.append(text(x0 + 52, y + 11, token, 11, "end", class_=f"cand-token r{c}", data_k=str(k)))
            parts.append(text(x0 + 62 + 150 * p, y + 11, number(p, ".2f"), 10, class_=f"cand-p r{c}", data_k=str(k)))
        logp = math.log(max(run[0]["p"], 1e-300))
        parts.append(text(x0, height - 10, say("decoding.logp", logp=number(logp, ".2f")), 11, class_=f"logp r{c}"))
    data["steps"] = steps
    controls = el("span", say("decoding.source", source=el("code", source))) + slider(
        "decoding.slider", "t", number(1), steps=steps, at=0, aria_label=say("decoding.slider_aria"),
        aria_valuetext=say("decoding.slider_value", t=number(1)))  # fmt: skip
    said = [say("decoding.chose", rule=r, token=data["runs"][r][0]["token"], p=number(data["runs"][r][0]["p"], ".2f"))
            for r in rules]  # fmt: skip
    readout = say("decoding.readout", t=number(1), said=say("common.clauses").join(said))
    return Explorer(name, join(parts), width=width, height=height, data=data, script=_SCRIPT,
                    controls=controls, readout=readout, words="decoding", call=call)  # fmt: skip
