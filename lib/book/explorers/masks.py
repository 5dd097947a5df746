"""Masks: which keys each query may see (chapter 5)."""

from __future__ import annotations

from collections.abc import Sequence

import torch

from .draw import (
    BLOCKED,
    MUTED,
    ROW_PITCH,
    blues,
    checkbox,
    column_label,
    lines,
    outline,
    row_label,
    row_target,
    text,
    text_width,
    wrap,
)
from .explorer import Explorer, call_of
from .kit import el, join, number
from .words import say

_SCRIPT = """
const T=data.T;let row=0;const box=(m)=>$('input[data-mask="'+m+'"]');
function ok(i,j){return (!box('look').checked||data.look[i][j])&&(!box('pad').checked||data.pad[i][j]);}
function pick(i){row=i;$('.outline').setAttribute('y',data.top+i*data.cell-1);const seen=[];current(i);
for(let j=0;j<T;j++)if(ok(i,j))seen.push(data.tokens[j]);let n=0;
for(let a=0;a<T;a++)for(let b=0;b<T;b++)if(ok(a,b))n++;
$('.explorer-readout').textContent=say('readout',{i:i,token:data.tokens[i],n:seen.length,
keys:seen.length==1?S.key:S.keys,seen:seen.join(' '),allowed:n,pairs:T*T});
root.dataset.row=i;root.dataset.seen=seen.length;root.dataset.allowed=n;}
function draw(){$$('rect.cell').forEach((e)=>{const y=ok(+e.dataset.row,+e.dataset.col);
e.setAttribute('fill',y?data.on:C.blocked);});$$('text.mark').forEach((e)=>{
e.textContent=ok(+e.dataset.row,+e.dataset.col)?'':S.blocked;});pick(row);}
rows(T,pick);$$('input[data-mask]').forEach((b)=>b.addEventListener('change',draw));draw();
"""


def mask_explorer(tokens: Sequence[str], lookahead: torch.Tensor, padding: torch.Tensor, *,
                  name: str = "masks") -> Explorer:  # fmt: skip
    """Which key ``j`` (column) each query ``i`` (row) of ``tokens`` may attend to, with the look-ahead
    mask and the padding mask each switched on or off by a checkbox. Both masks are ``lib``'s own:
    ``lookahead`` ``[T, T]`` and ``padding`` (broadcast to ``[T, T]``), boolean, ``True`` where attention
    is allowed (any other dtype is refused: ``.bool()`` of PyTorch's additive float mask, ``-inf`` where
    blocked, would be ``True`` exactly there); with both on, a pair is allowed only where both allow it (their conjunction).
    Point at a row to read which keys its query sees."""
    call = call_of("mask_explorer", [], tokens=tokens, lookahead=lookahead, padding=padding, name=name)
    T = len(tokens)
    look, pad = _boolean("lookahead", lookahead), _boolean("padding", padding)
    try:
        pad = pad.broadcast_to((T, T))
    except RuntimeError:
        pad = None
    if pad is None or look.shape != (T, T):
        raise ValueError(f"lookahead must be [T, T] and padding broadcast to [T, T] with T={T} tokens, "
                         f"got {list(look.shape)} and {list(torch.as_tensor(padding).shape)}")  # fmt: skip
    cell, size = max(34.0, ROW_PITCH), 12.0
    left = 10 + max(text_width(t, size) for t in tokens)
    top = 14 + 0.72 * max(text_width(t, size) for t in tokens)
    width = max(left + T * cell + 12, 380.0)
    legend = say("masks.legend")
    legend_lines = len(wrap(legend, 10, width - left - 8))  # in any language, within the figure
    height = top + T * cell + 28 + 13 * (legend_lines - 1)
    allowed = look & pad
    parts = []
    for j, token in enumerate(tokens):
        parts.append(column_label(left + (j + 0.5) * cell, top - 6, token, size))
    for i, token in enumerate(tokens):
        aria = say("masks.row_aria", i=number(i), token=token)
        for j in range(T):
            ok = bool(allowed[i, j])
            parts.append(el("rect", x=left + j * cell + 1, y=top + i * cell + 1, width=cell - 2, height=cell - 2,
                            fill=blues(0.55) if ok else BLOCKED, class_="cell", data_row=str(i), data_col=str(j)))  # fmt: skip
            parts.append(text(left + (j + 0.5) * cell, top + (i + 0.5) * cell + 4, "" if ok else say("masks.blocked"),
                              12, "middle", fill=MUTED, class_="mark", data_row=str(i), data_col=str(j),
                              pointer_events="none"))  # fmt: skip
        parts.append(row_target(0, top + i * cell, left + T * cell, cell, i))
        parts.append(row_label(left - 6, top + (i + 0.5) * cell + 4, token, size, i, aria))
    parts.append(outline(left, top, T * cell, cell))
    parts.append(lines(left, height - 8 - 13 * (legend_lines - 1), legend, 10, width - left - 8, fill=MUTED)[0])
    controls = checkbox(say("masks.look"), "look") + checkbox(say("masks.pad"), "pad")
    data = {"T": T, "cell": cell, "top": top, "tokens": list(tokens), "look": look.int().tolist(),
            "pad": pad.int().tolist(), "on": blues(0.55)}  # fmt: skip
    seen = [tokens[j] for j in range(T) if allowed[0, j]]
    readout = say("masks.readout", i=number(0), token=tokens[0], n=number(len(seen)),
                  keys=say("masks.key" if len(seen) == 1 else "masks.keys"), seen=" ".join(seen),
                  allowed=number(int(allowed.sum())), pairs=number(T * T))  # fmt: skip
    return Explorer(name, join(parts), width=width, height=height, data=data, script=_SCRIPT,
                    controls=controls, readout=readout, words="masks", call=call)  # fmt: skip


def _boolean(name: str, mask: object) -> torch.Tensor:
    """``mask`` as a boolean tensor on the CPU; a mask of another dtype is refused with a ``TypeError``."""
    mask = torch.as_tensor(mask)
    if mask.dtype != torch.bool:
        raise TypeError(
            f"{name} must be a boolean mask, True where a query may attend (lib.causal_mask, lib.padding_mask), "
            f"got a {mask.dtype} tensor; PyTorch's additive float mask (0 = may attend, -inf = blocked) is "
            f"the boolean mask {name} != float('-inf')"
        )
    return mask.cpu()
