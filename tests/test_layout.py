"""The layout rules of CONTRIBUTING.md ("The rules of `lib`"), checked on the source and in a fresh process.

- `lib/model` imports only torch and the standard library: nothing else of `lib`, no plotting or
  data-frame library (read from the source with `ast`, imports inside functions included);
- nothing in `lib` outside `lib/bench` imports `lib.bench`;
- `import lib.model` (and `lib`, and the packages around the model) leaves matplotlib, seaborn,
  scipy, pandas and `lib.bench` out of `sys.modules`;
- CONTRIBUTING.md and README.md are self-contained: they reference no path outside the repository,
  and the repository paths they name exist.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
LIB = REPO / "lib"
HEAVY = ("matplotlib", "seaborn", "scipy", "pandas")


def module_name(path: Path) -> str:
    """``lib/model/attention.py`` -> ``lib.model.attention``; ``lib/model/__init__.py`` -> ``lib.model``."""
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path, package: str | None = None) -> list[tuple[int, str]]:
    """Every module ``path`` imports, as absolute dotted names, with its line: relative imports
    resolved against the file's package, ``from X import Y`` giving both ``X`` and ``X.Y`` (Y may
    be a submodule)."""
    if package is None:
        package = module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module
            if module == "__future__":
                continue
            found.append((node.lineno, module))
            found += [(node.lineno, f"{module}.{alias.name}") for alias in node.names if alias.name != "*"]
    return found


def sources(folder: Path) -> list[Path]:
    return sorted(folder.rglob("*.py"))


def test_imports_resolves_relative_imports(tmp_path: Path) -> None:
    """The resolver itself, on a file of known imports (a check that cannot fail checks nothing)."""
    source = tmp_path / "switch.py"
    source.write_text(
        "from __future__ import annotations\nimport torch.nn as nn\nfrom .. import bench\n"
        "from ..model.attention import MultiHeadAttention\nfrom .blockwise import *\n"
        "def f():\n    import matplotlib.pyplot\n"
    )
    assert [name for _, name in imports(source, package="lib.efficient")] == [
        "torch.nn",
        "lib",
        "lib.bench",
        "lib.model.attention",
        "lib.model.attention.MultiHeadAttention",
        "lib.efficient.blockwise",
        "matplotlib.pyplot",
    ]


@pytest.mark.parametrize("path", sources(LIB / "model"), ids=lambda p: p.name)
def test_the_model_imports_only_torch_and_the_standard_library(path: Path) -> None:
    bad = []
    for line, name in imports(path):
        top = name.split(".")[0]
        if name == "lib.model" or name.startswith("lib.model."):
            continue
        if top == "torch" or (top in sys.stdlib_module_names and top != "lib"):
            continue
        bad.append(f"line {line}: {name}")
    assert not bad, f"{path.relative_to(REPO)} imports more than torch and the standard library: {bad}"


@pytest.mark.parametrize("path", sources(LIB / "model"), ids=lambda p: p.name)
def test_the_model_imports_no_plotting_or_data_frame_library(path: Path) -> None:
    bad = [f"line {line}: {name}" for line, name in imports(path) if name.split(".")[0] in HEAVY]
    assert not bad, f"{path.relative_to(REPO)} imports {bad}"


def test_nothing_in_lib_imports_the_benchmarks() -> None:
    bad = [
        f"{path.relative_to(REPO)}:{line}: {name}"
        for path in sources(LIB)
        if LIB / "bench" not in path.parents
        for line, name in imports(path)
        if name == "lib.bench" or name.startswith("lib.bench.")
    ]
    assert not bad, f"lib.bench is a leaf; these import it: {bad}"


# Imported one after the other in one fresh interpreter; after each, what it newly loaded.
PROBE = """
import importlib, json, sys
forbidden = {"matplotlib", "seaborn", "scipy", "pandas", "lib.bench"}
report = {}
for name in sys.argv[1:]:
    importlib.import_module(name)
    report[name] = sorted(m for m in forbidden if m in sys.modules)
print(json.dumps(report))
"""
# lib.model first: what it loads alone is what the first line reports. The rest add up: a package
# that loads nothing forbidden after the others also loads nothing forbidden alone.
LIGHT = ["lib.model", "lib", "lib.timing", "lib.training", "lib.heads", "lib.rnn", "lib.efficient", "lib.book"]
LIGHT += ["lib.book.claims", "lib.book.source", "lib.pretrained"]


def test_importing_the_model_and_its_neighbours_loads_no_plotting_library_nor_the_benchmarks() -> None:
    result = subprocess.run(
        [sys.executable, "-c", PROBE, *LIGHT],
        cwd=REPO,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    loaded = json.loads(result.stdout)
    assert loaded["lib.model"] == [], f"`import lib.model` loads {loaded['lib.model']}"
    bad = {name: modules for name, modules in loaded.items() if modules}
    assert not bad, f"imported in this order, each loaded: {loaded}"


# ---- the contributor's documents are self-contained ----------------------------------------------

DOCUMENTS = [REPO / "CONTRIBUTING.md", REPO / "README.md"]
OUTSIDE = re.compile(r"\.\./|(?<![\w.])shared/|LIB_API|BOOK_PLAN|TOOLING_NOTES|(?<![\w:/])(?:/work|/home|/tmp|~)/")
REPO_PATH = re.compile(r"^(?:lib|tests|tools|book|\.github|\.ci|_extra|_static)/[\w./-]*$")


def referenced_paths(text: str) -> list[str]:
    """Repository paths named in `code spans` and in relative Markdown links (placeholders such as
    ``book/NN_slug.ipynb`` left out)."""
    spans = [span for span in re.findall(r"`([^`\n]+)`", text) if "NN" not in span]
    links = [target for target in re.findall(r"\]\(([^)\s]+)\)", text) if "://" not in target]
    return [p for p in spans + links if REPO_PATH.match(p) or p in {link.split("#")[0] for link in links}]


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: p.name)
def test_documents_reference_nothing_outside_the_repository(document: Path) -> None:
    text = document.read_text(encoding="utf-8")
    outside = [(n, line) for n, line in enumerate(text.splitlines(), start=1) if OUTSIDE.search(line)]
    assert not outside, f"{document.name} points outside the repository: {outside}"


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: p.name)
def test_the_paths_documents_name_exist(document: Path) -> None:
    named = [p for p in referenced_paths(document.read_text(encoding="utf-8")) if p]
    missing = [p for p in named if not (REPO / p).exists()]
    assert named and not missing, f"{document.name} names paths that are not in the repository: {missing}"


def test_the_document_checks_catch_what_they_must() -> None:
    assert OUTSIDE.search("see /work/shared/LIB_API.md") and OUTSIDE.search("../notes.md")
    assert not OUTSIDE.search("https://github.com/cs224n-book/transformers-executed/blob/main/book/x.ipynb")
    assert referenced_paths("`lib/model/`, [x](README.md), `lib.model`, `tests/*.py`, `book/NN_x.ipynb`") == [
        "lib/model/",
        "README.md",
    ]


def test_test_folders_are_no_packages_and_test_basenames_are_unique() -> None:
    """CONTRIBUTING.md: the test folders (tests/model, tests/tools, ...) have no ``__init__.py``, so
    pytest imports every test file by its basename, which must therefore be unique."""
    tests = REPO / "tests"
    assert not sorted(p.relative_to(REPO).as_posix() for p in tests.rglob("__init__.py"))
    names: dict[str, list[str]] = {}
    for path in tests.rglob("test_*.py"):
        names.setdefault(path.name, []).append(path.relative_to(REPO).as_posix())
    assert not {name: paths for name, paths in names.items() if len(paths) > 1}


def test_one_conftest_under_tests() -> None:
    """Test files import helpers with ``from conftest import ...``: a second conftest.py in a test folder
    would be the module that name finds, and those imports would break."""
    assert sorted(p.relative_to(REPO).as_posix() for p in (REPO / "tests").rglob("conftest.py")) == [
        "tests/conftest.py"
    ]


MAX_LINES = 400  # CONTRIBUTING.md: a module that outgrows it holds more than one concept


@pytest.mark.parametrize("path", sorted(LIB.rglob("*.py")), ids=lambda p: p.relative_to(LIB).as_posix())
def test_no_lib_module_is_over_400_lines(path: Path) -> None:
    assert len(path.read_text().splitlines()) <= MAX_LINES


def private_imports(path: Path) -> list[str]:
    """The private names (``_name``) that ``path`` imports from another module of ``lib``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module != "__future__":
            found += [
                f"{node.module}.{a.name}" for a in node.names if a.name.startswith("_") and a.name != "__version__"
            ]
    return found


@pytest.mark.parametrize("path", sorted(LIB.rglob("*.py")), ids=lambda p: p.relative_to(LIB).as_posix())
def test_no_lib_module_imports_a_private_name_of_another(path: Path) -> None:
    """A module's private names are its own: what two modules share is public in one of them (the one
    training loop imports nothing private of the ensemble's, nor the ensemble of the loop's)."""
    assert private_imports(path) == []


def test_private_imports_are_found(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("from .train import _paper_adam, train\nfrom __future__ import annotations\n")
    assert private_imports(module) == ["train._paper_adam"]


# The rooms of lib/training (CONTRIBUTING.md): what each may import of the others.
TRAINING_MAY_NOT_IMPORT = {
    "losses": {"evaluation", "options", "sources", "step", "loop", "train", "ensemble", "folded", "vmapped"},
    "options": {"sources", "step", "loop", "train", "ensemble", "folded", "vmapped", "architecture"},
    "sources": {"step", "loop", "train", "ensemble", "folded", "vmapped", "architecture"},
    "step": {"loop", "train", "ensemble", "folded", "vmapped", "architecture"},
    "loop": {"train", "ensemble", "folded", "vmapped", "architecture"},
    "train": {"ensemble", "folded", "vmapped", "architecture"},
    "ensemble": {"train"},
    "folded": {"loop", "train", "ensemble", "step"},
    "vmapped": {"loop", "train", "ensemble", "step", "folded"},
}


@pytest.mark.parametrize("room", sorted(TRAINING_MAY_NOT_IMPORT))
def test_the_rooms_of_training_import_what_their_job_needs(room: str) -> None:
    """One loop, two steps: the loop knows no step but the protocol, and neither entry point (train,
    train_ensemble) imports the other."""
    names = {name for _, name in imports(LIB / "training" / f"{room}.py")}
    forbidden = {f"lib.training.{other}" for other in TRAINING_MAY_NOT_IMPORT[room]}
    assert not names & forbidden


# ---- tools/: rooms of one job, as lib ------------------------------------------------------------

TOOLS = REPO / "tools"


@pytest.mark.parametrize("path", sorted(TOOLS.rglob("*.py")), ids=lambda p: p.relative_to(TOOLS).as_posix())
def test_no_tools_module_is_over_400_lines(path: Path) -> None:
    """The book's tools follow lib's rule: a module that outgrows it does more than one job (split it
    into rooms, as tools/book_ext/ and tools/myst/ are)."""
    assert len(path.read_text(encoding="utf-8").splitlines()) <= MAX_LINES


def import_graph(root: Path, package: str) -> dict[str, set[str]]:
    """Every module under ``root`` (the package ``package``) -> the modules of that tree it imports,
    imports inside functions included. An imported name is a module of the tree by its longest dotted
    prefix; a bare name (``i18n_ext.languages``: Sphinx imports the book's extensions as top-level
    modules) is one too when its first part is a module of the tree and not of the standard library."""
    modules = {}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        modules[".".join((package, *(parts[:-1] if parts[-1] == "__init__" else parts)))] = path
    tops = {name.split(".")[1] for name in modules if "." in name} - set(sys.stdlib_module_names)
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        own_package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        found = set()
        for _, imported in imports(path, package=own_package):
            if imported.split(".")[0] in tops:
                imported = f"{package}.{imported}"
            parts = imported.split(".")
            prefix = next(
                (".".join(parts[:n]) for n in range(len(parts), 0, -1) if ".".join(parts[:n]) in modules), None
            )
            if prefix is not None and prefix != name:
                found.add(prefix)
        graph[name] = found
    return graph


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The cycles of an import graph (each once, as found by a depth-first walk): ``[a, b, a]`` when a
    imports b and b imports a."""
    cycles, done = [], set()

    def walk(name: str, path: list[str]) -> None:
        for other in sorted(graph.get(name, ())):
            if other in path:
                cycles.append([*path[path.index(other) :], other])
            elif other not in done:
                walk(other, [*path, other])
        done.add(name)

    for name in sorted(graph):
        if name not in done:
            walk(name, [name])
    return cycles


def test_no_two_tools_modules_import_each_other() -> None:
    """Each room of tools/ uses the rooms below it and none above: no module imports one that imports
    it, directly or through others (tools/pdf.py and tools/site.py once did)."""
    graph = import_graph(TOOLS, "tools")
    assert "tools.myst.parsing" in graph["tools.myst.book"]  # the graph sees the imports it must
    assert "tools.i18n_ext.languages" in graph["tools.book_ext.phone_figures"]  # a top-level name too
    assert import_cycles(graph) == []


def test_import_cycles_are_found(tmp_path: Path) -> None:
    """The check itself, on a tree of known imports: a cycle through a function's import and a relative
    import is found; a one-way import and a standard-library name are not cycles."""
    (tmp_path / "rooms").mkdir()
    (tmp_path / "__init__.py").write_text("")
    (tmp_path / "a.py").write_text("import json\n\n\ndef f():\n    from pkg.rooms import b\n")
    (tmp_path / "rooms" / "__init__.py").write_text("")
    (tmp_path / "rooms" / "b.py").write_text("from .c import x\n")
    (tmp_path / "rooms" / "c.py").write_text("from ..a import f\nimport json\n")
    (tmp_path / "json.py").write_text("import re\n")
    (tmp_path / "d.py").write_text("from pkg.a import f\n")
    graph = import_graph(tmp_path, "pkg")
    assert graph["pkg.d"] == {"pkg.a"} and graph["pkg.a"] == {"pkg.rooms", "pkg.rooms.b"}
    assert import_cycles(graph) == [["pkg.a", "pkg.rooms.b", "pkg.rooms.c", "pkg.a"]]
