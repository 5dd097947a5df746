"""A claim's condition, read from the chapter's code: what it compares, and each seed's margin to the threshold.

``lib.claim("accuracy above 90% at every length", lowest > 0.9, lowest=lowest)`` displays the values
it records, not its condition. This module finds each ``lib.claim``/``lib.check`` call in a notebook's
code (``ast``), and rewrites its condition in terms of the values the call records: every
sub-expression that is written exactly as one of the recorded values (``attended.min()`` beside
``lowest=attended.min()``) becomes that value's name. A condition that then reads nothing but
recorded values and constants can be evaluated from the ledger's values of each seed (the seed
sweep, ``tools/sweep.py``), and so can its **margin**: for a comparison ``a > b`` (or ``≥``) it is
``a − b``, for ``a < b`` (or ``≤``) ``b − a``, positive while the condition holds; for several
comparisons joined by ``and``, the one with the smallest margin relative to its threshold. The seed
with the smallest margin is the one that came closest to failing.
"""

from __future__ import annotations

import ast
import operator
import re
import statistics
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

_FUNCTIONS = {
    "min": min,
    "max": max,
    "abs": abs,
    "len": len,
    "sum": sum,
    "float": float,
    "int": int,
    "bool": bool,
    "median": statistics.median,
    "mean": statistics.fmean,
}
_ARITHMETIC = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.Pow: operator.pow,
    ast.FloorDiv: operator.floordiv,
}
_ORDER = (ast.Gt, ast.GtE, ast.Lt, ast.LtE)
_MODULES = {"np", "numpy", "statistics"}  # np.median(x) and the like (:func:`_numpy_call`)


@dataclass
class Condition:
    """One ``lib.claim``/``lib.check`` call of a chapter: its kind, a pattern its statement matches,
    and its condition with the recorded values as names (``None`` where it cannot be evaluated)."""

    kind: str
    pattern: re.Pattern
    source: str  # the condition as written
    rewritten: ast.expr | None  # the condition over the recorded names, if it reads nothing else
    recorded: tuple[str, ...]
    over_names: ast.expr | None = None  # the condition over the recorded names, whatever else it reads

    @property
    def reads(self) -> set[str]:
        """The recorded values the condition reads (those written in it as they are recorded), whether
        or not it also reads something it does not record."""
        if self.over_names is None:
            return set()
        return {n.id for n in ast.walk(self.over_names) if isinstance(n, ast.Name) and n.id in self.recorded}

    def margin(self, values: Mapping[str, object]) -> Margin | None:
        """The margin of one seed's recorded ``values``, or ``None`` if it cannot be computed."""
        if self.rewritten is None:
            return None
        try:
            return _margin(self.rewritten, values)
        except (ArithmeticError, KeyError, IndexError, TypeError, ValueError):
            return None


@dataclass(frozen=True)
class Margin:
    """How far one seed's values are from failing the condition: ``value`` (positive while it holds),
    the comparison it belongs to (over the recorded names), and ``relative``, the margin over the
    threshold's size (how several comparisons, and seeds, are ranked)."""

    value: float
    comparison: str
    relative: float


def conditions(cells: list[str]) -> list[Condition]:
    """Every ``lib.claim``/``lib.check`` call in the code ``cells`` (a notebook's), in order."""
    found = []
    for source in cells:
        code = "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines())
        try:
            tree = ast.parse(code)
        except SyntaxError:
            continue
        calls = [n for n in ast.walk(tree) if _is_claim_call(n)]
        for call in sorted(calls, key=lambda n: (n.lineno, n.col_offset)):
            pattern = _statement_pattern(call.args[0])
            if pattern is None:
                continue
            recorded = {k.arg: k.value for k in call.keywords if k.arg}
            kind = "Claim" if call.func.attr == "claim" else "Check"
            condition = call.args[1]
            found.append(
                Condition(
                    kind,
                    pattern,
                    ast.unparse(condition),
                    _over_recorded(condition, recorded),
                    tuple(recorded),
                    _names_for_recorded(condition, recorded),
                )
            )
    return found


def find(conditions: list[Condition], kind: str, statement: str, occurrence: int) -> Condition | None:
    """The call that displayed ``statement`` (its ``occurrence``-th display in the run, counted from 0)."""
    matching = [c for c in conditions if c.kind == kind and c.pattern.fullmatch(statement)]
    if not matching:
        return None
    return matching[min(occurrence, len(matching) - 1)] if len(matching) > 1 else matching[0]


def _is_claim_call(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("claim", "check")
        and len(node.args) >= 2
    )


def _statement_pattern(node: ast.expr) -> re.Pattern | None:
    """A regular expression for the statements an argument can display: a literal exactly, an
    f-string's literal parts with anything between them."""
    parts = list(_literal_parts(node))
    if parts is None or not any(p for p in parts if p is not None):
        return None
    return re.compile("".join(".*?" if p is None else re.escape(p) for p in parts), re.DOTALL)


def _literal_parts(node: ast.expr) -> Iterator[str | None]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        yield node.value
    elif isinstance(node, ast.JoinedStr):
        for value in node.values:
            yield value.value if isinstance(value, ast.Constant) else None
    elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        yield from _literal_parts(node.left)
        yield from _literal_parts(node.right)
    else:
        yield None


def _names_for_recorded(condition: ast.expr, recorded: dict[str, ast.expr]) -> ast.expr:
    """``condition`` with every sub-expression written as a recorded value replaced by its name (the
    rest as it is)."""
    written = {ast.unparse(value): name for name, value in recorded.items()}

    class Names(ast.NodeTransformer):
        def visit(self, node):
            if isinstance(node, ast.expr) and ast.unparse(node) in written:
                return ast.copy_location(ast.Name(written[ast.unparse(node)], ast.Load()), node)
            return super().visit(node)

    return Names().visit(ast.parse(ast.unparse(condition), mode="eval").body)


def _over_recorded(condition: ast.expr, recorded: dict[str, ast.expr]) -> ast.expr | None:
    """``condition`` with every sub-expression written as a recorded value replaced by its name, or
    ``None`` if it still reads anything that is not recorded (or a constant)."""
    rewritten = _names_for_recorded(condition, recorded)
    for node in ast.walk(rewritten):
        if isinstance(node, ast.Name) and node.id not in recorded and node.id not in {*_FUNCTIONS, *_MODULES}:
            return None
        if isinstance(node, (ast.Lambda, ast.GeneratorExp, ast.ListComp, ast.Attribute)) and not _numpy_call(node):
            return None
    return rewritten


def _numpy_call(node: ast.AST) -> bool:
    """``np.median``, ``np.mean``, ``np.min``, ``np.max`` (the functions of :data:`_FUNCTIONS`)."""
    return isinstance(node, ast.Attribute) and node.attr in ("median", "mean", "min", "max")


def _margin(node: ast.expr, values: Mapping[str, object]) -> Margin:
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "bool" and node.args:
        return _margin(node.args[0], values)
    if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And):
        return min((_margin(v, values) for v in node.values), key=lambda m: m.relative)
    if not isinstance(node, ast.Compare):
        raise TypeError("not a comparison")
    margins, left = [], node.left
    for op, right in zip(node.ops, node.comparators):
        if not isinstance(op, _ORDER):
            raise TypeError("not an order comparison")
        a, b = float(_value(left, values)), float(_value(right, values))
        margin = a - b if isinstance(op, (ast.Gt, ast.GtE)) else b - a
        threshold = (
            b if isinstance(right, ast.Constant) else a if isinstance(left, ast.Constant) else max(abs(a), abs(b))
        )
        text = ast.unparse(ast.Compare(left, [op], [right]))
        margins.append(Margin(margin, text, margin / max(abs(threshold), 1e-12)))
        left = right
    return min(margins, key=lambda m: m.relative)


def _value(node: ast.expr, values: Mapping[str, object]):
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return node.value
    if isinstance(node, ast.Name):
        return values[node.id]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_value(node.operand, values)
    if isinstance(node, ast.BinOp) and type(node.op) in _ARITHMETIC:
        return _ARITHMETIC[type(node.op)](_value(node.left, values), _value(node.right, values))
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        container = _value(node.value, values)
        key = node.slice.value
        return container[str(key)] if isinstance(container, Mapping) else container[key]
    if isinstance(node, ast.Call) and not node.keywords:
        name = node.func.id if isinstance(node.func, ast.Name) else node.func.attr if _numpy_call(node.func) else None
        if name in _FUNCTIONS:
            args = [_value(a, values) for a in node.args]
            return _FUNCTIONS[name](*args) if len(args) > 1 else _FUNCTIONS[name](args[0])
    raise TypeError(f"cannot evaluate {ast.unparse(node)}")
