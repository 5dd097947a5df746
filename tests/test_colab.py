"""A chapter runs as it would in Google Colab.

A Colab runtime has torch, matplotlib, seaborn, tqdm and ipykernel, and no `lib`; Colab has imported
`google.colab`. So this test makes a fresh virtual environment with only those packages and what
they need, as the book's environment has them installed (requirements.txt's pins; hard-linked file
by file: `_link_distributions`), registers it as a Jupyter kernel, and runs a chapter in it, from a
folder that holds nothing but the notebook:

1. a first, added cell checks that `lib` cannot be imported, puts `google.colab` in `sys.modules`
   and records the installed versions of the preinstalled packages;
2. the chapter's own setup cell runs unchanged, except that its install URL points at this clone
   (`git+file://localhost/...@<ref>` instead of `git+https://github.com/...@<ref>`): `%pip`
   installs `lib` from git at that ref, as in Colab; an added cell checks that it did;
3. the whole chapter runs, end to end;
4. an added cell checks that `lib` came from the new install, and that torch and the other
   preinstalled packages are the versions they were (Colab's torch is kept).

`lib` is installed from a snapshot of this working tree's `lib`, committed in a scratch repository
under the ref the setup cell names (`repository.branch`): in Colab the notebook and the `lib` it
installs come from the same ref, and here they come from the same working tree. (The student
versions are executed in a fresh kernel by tests/test_student.py.)

Then the import lines of EVERY chapter are checked against the same environment: a chapter that
imports something Colab does not have (and `lib` does not bring) fails here.

It executes the cheapest chapter only, as the seed sweep measured them, by default
(`BOOK_TEST_ALL_CHAPTERS=1`: all; see conftest.chapters_to_execute). Needs git (Colab installs lib with `%pip install git+...`).
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import warnings
from importlib import metadata
from pathlib import Path

import nbformat
import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from conftest import REPO, chapters_to_execute, skip_or_fail
from tools.common import SPEC_LINE, chapters, first_code_cell, repository, setup_extras

pytestmark = [pytest.mark.colab, pytest.mark.slow]

# What Colab preinstalls that the book needs. Nothing else goes into the environment.
COLAB_PREINSTALLED = ("torch", "matplotlib", "seaborn", "tqdm", "ipykernel")
KEPT = COLAB_PREINSTALLED + ("numpy",)  # must be the same versions after lib's install
KERNEL = "colab-like"
INSTALL_TIMEOUT_S = 20 * 60


VERSIONS = "import importlib.metadata as m, json, sys; print(json.dumps({n: m.version(n) for n in sys.argv[1:]}))"


def _requirements(distribution: metadata.Distribution, extras: set[str]) -> list[Requirement]:
    """What `distribution` (with `extras`) needs on this machine: its requirements whose markers hold."""
    needed = []
    for line in distribution.requires or []:
        requirement = Requirement(line)
        marker = requirement.marker
        if marker is None or any(marker.evaluate({"extra": extra}) for extra in {"", *extras}):
            needed.append(requirement)
    return needed


def _closure(names: tuple[str, ...]) -> dict[str, metadata.Distribution]:
    """`names` and every distribution they need, as installed in this environment, by name."""
    waiting: list[tuple[str, set[str]]] = [(name, set()) for name in names]
    extras: dict[str, set[str]] = {}
    found: dict[str, metadata.Distribution] = {}
    while waiting:
        name, wanted = waiting.pop(0)
        key = canonicalize_name(name)
        if key in found and wanted <= extras[key]:
            continue
        extras[key] = extras.get(key, set()) | wanted
        found[key] = metadata.distribution(name)
        waiting += [(r.name, set(r.extras)) for r in _requirements(found[key], extras[key])]
    return found


def _link(source: Path, target: Path, python: Path) -> None:
    """`source` at `target`, hard-linked (a copy across file systems); a script of the venv's `bin/` is
    copied with its first line naming the venv's `python`."""
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.parent == python.parent and source.read_bytes()[:2] == b"#!":
        lines = source.read_text(encoding="utf-8").splitlines(keepends=True)
        target.write_text(f"#!{python}\n" + "".join(lines[1:]), encoding="utf-8")
        target.chmod(source.stat().st_mode)
        return
    try:
        os.link(source, target)
    except OSError:  # another file system
        shutil.copy2(source, target)


def _link_distributions(venv: Path, names: tuple[str, ...]) -> list[str]:
    """Put `names` and everything they need into the fresh `venv` as they are installed here (the
    same versions, from the same wheels): every file each one's RECORD lists, and the `.pyc` beside
    each module (`tools.bytecode` compiled them, as Colab's packages are compiled), hard-linked, as
    uv installs. 2 s for the 50 distributions, where a fresh venv and a second `pip install` of the
    same wheels took 20 s. Returns the distributions' names."""
    site = Path(sysconfig.get_paths()["purelib"])
    target_site = venv / site.relative_to(sys.prefix)
    python = venv / "bin" / "python"
    distributions = _closure(names)
    for distribution in distributions.values():
        for file in distribution.files or []:
            source = Path(distribution.locate_file(file))
            target = Path(os.path.normpath(target_site / file))
            files = [(source, target)]
            cached = Path(importlib.util.cache_from_source(str(source))) if source.suffix == ".py" else None
            if cached is not None and cached.is_file():
                files.append((cached, Path(importlib.util.cache_from_source(str(target)))))
            for source, target in files:
                if not target.exists():
                    _link(source, target, python)
    return list(distributions)


def _run(cmd, **kw) -> subprocess.CompletedProcess:
    proc = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if proc.returncode != 0:
        pytest.fail(f"{' '.join(map(str, cmd))} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return proc


def _kernel_env(venv: Path) -> dict:
    """The environment of the Colab-like kernel: this venv first on PATH, nothing of the book's."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "TQDM_DISABLE", "PYTHONHOME")}
    paths = [p for p in env.get("PATH", "").split(os.pathsep) if not p.startswith(str(Path(sys.prefix)))]
    env["PATH"] = os.pathsep.join([str(venv / "bin"), *paths])
    # The setup cell's %pip writes no .pyc for what it installs (Python compiles what it imports): the
    # same files as Colab's install, without compiling transformers' thousands of modules. pip reads
    # this variable into its `compile` setting, so "0" is `--no-compile` ("1" would compile).
    env["PIP_NO_COMPILE"] = "0"
    return env


@pytest.fixture(scope="module")
def colab(tmp_path_factory) -> dict:
    if shutil.which("git") is None:
        skip_or_fail("git is not installed: Colab's setup cell installs lib with `%pip install git+...`")
    root = tmp_path_factory.mktemp("colab")
    venv = root / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    python = venv / "bin" / "python"
    linked = _link_distributions(venv, ("pip", *COLAB_PREINSTALLED))
    versions = json.loads(
        _run([str(python), "-c", VERSIONS, *COLAB_PREINSTALLED], cwd=root).stdout  # what the new venv sees
    )
    assert versions == {name: metadata.version(name) for name in COLAB_PREINSTALLED}, (versions, linked)
    spec = _run([str(python), "-c", "import importlib.util; print(importlib.util.find_spec('lib'))"], cwd=root)
    assert spec.stdout.strip() == "None", "the fresh environment can already import lib"
    kernel_dir = root / "jupyter" / "kernels" / KERNEL
    kernel_dir.mkdir(parents=True)
    (kernel_dir / "kernel.json").write_text(
        json.dumps(
            {
                "argv": [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                "display_name": "Colab-like",
                "language": "python",
            }
        )
    )
    return {"root": root, "venv": venv, "python": python, "jupyter_path": root / "jupyter"}


def _lib_source(root: Path, ref: str) -> str:
    """A scratch git repository holding this working tree's lib at `ref` (a branch or tag there)."""
    # file://localhost/...: the pip that `python -m venv` brings (23.x) rejects git+file:///... URLs.
    snap = root / "snapshot"
    snap.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, snap / name)
    shutil.copytree(REPO / "lib", snap / "lib", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    git = ["git", "-c", "user.name=test", "-c", "user.email=test@example.com", "-c", "init.defaultBranch=scratch"]
    _run(git + ["init", "-q"], cwd=snap)
    _run(git + ["add", "-A"], cwd=snap)
    _run(git + ["commit", "-q", "-m", "snapshot of lib"], cwd=snap)
    _run(git + ["tag", ref], cwd=snap)
    return f"file://localhost{snap}"


PRELUDE = """\
# Added by tests/test_colab.py: a fresh Colab runtime.
import importlib.metadata, importlib.util, sys, types
assert importlib.util.find_spec("lib") is None, "lib is importable before the setup cell ran"
sys.modules["google.colab"] = types.ModuleType("google.colab")  # Colab has imported it
_colab_versions = {name: importlib.metadata.version(name) for name in %r}
"""

INSTALLED = """\
# Added by tests/test_colab.py: the setup cell installed lib.
import importlib, importlib.util
importlib.invalidate_caches()
assert importlib.util.find_spec("lib") is not None, "the setup cell did not install lib (see its output)"
"""

EPILOGUE = """\
# Added by tests/test_colab.py: lib came from the setup cell; Colab's packages are untouched.
import importlib, importlib.metadata, json, sys
importlib.invalidate_caches()
import lib
assert lib.__file__.startswith(sys.prefix), f"lib was imported from {lib.__file__}, not installed into {sys.prefix}"
_after = {name: importlib.metadata.version(name) for name in _colab_versions}
assert _after == _colab_versions, f"the setup cell changed Colab's packages: {_colab_versions} -> {_after}"
print(json.dumps({"lib": lib.__file__, "versions": _after}))
"""


def test_chapter_runs_as_in_colab(colab: dict, tmp_path: Path, monkeypatch) -> None:
    from nbclient import NotebookClient

    selected = chapters_to_execute()
    if not selected:
        pytest.skip("no chapters yet")
    url, ref = repository()
    local = _lib_source(colab["root"], ref)
    where = f"a snapshot of this working tree's lib at {ref}"
    monkeypatch.setenv("JUPYTER_PATH", str(colab["jupyter_path"]))
    for key, value in _kernel_env(colab["venv"]).items():
        monkeypatch.setenv(key, value)
    for key in ("PYTHONPATH", "VIRTUAL_ENV", "TQDM_DISABLE", "PYTHONHOME"):
        monkeypatch.delenv(key, raising=False)

    for chapter in selected:
        nb = nbformat.read(chapter, as_version=4)
        i = first_code_cell(nb)
        setup = nb.cells[i]
        m = SPEC_LINE.search(setup.source)
        assert m and (m.group("url"), m.group("ref")) == (url, ref), (
            f"{chapter.name}: the setup cell does not install lib from {url}@{ref}"
        )
        setup.source = setup.source.replace(f"git+{url}@", f"git+{local}@")
        nb.cells.insert(i + 1, nbformat.v4.new_code_cell(INSTALLED))  # %pip does not raise when it fails
        nb.cells.insert(0, nbformat.v4.new_code_cell(PRELUDE % (KEPT,)))
        epilogue = nbformat.v4.new_code_cell(EPILOGUE)
        nb.cells.append(epilogue)
        workdir = tmp_path / chapter.stem
        workdir.mkdir()  # like /content: nothing but the notebook
        nbformat.write(nb, workdir / chapter.name)
        client = NotebookClient(
            nb, kernel_name=KERNEL, timeout=600, allow_errors=False, resources={"metadata": {"path": str(workdir)}}
        )
        try:
            client.execute()
        except Exception as exc:  # noqa: BLE001 - show which cell, with lib installed from where
            pip_output = "".join(o.get("text", "") for o in setup.get("outputs", []))
            pytest.fail(
                f"{chapter.name} failed in the Colab-like runtime (lib from {where}).\n"
                f"The setup cell printed:\n{pip_output[-2000:]}\n{str(exc)[-5000:]}"
            )
        report = json.loads(epilogue.outputs[-1]["text"])
        assert report["lib"].startswith(str(colab["venv"])), report
        pip_output = "".join(o.get("text", "") for o in setup.get("outputs", []))
        assert "Uninstalling torch" not in pip_output, pip_output


def _imported_modules(nb) -> set[str]:
    found = set()
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        code = "\n".join(l for l in cell.source.splitlines() if not l.lstrip().startswith(("%", "!")))
        try:
            with warnings.catch_warnings():  # a chapter's own SyntaxWarnings are not this test's
                warnings.simplefilter("ignore")
                tree = ast.parse(code)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                found.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module.split(".")[0])
    return found - {"google"}  # google.colab: only imported in Colab


def test_every_chapter_imports_only_what_colab_has(colab: dict) -> None:
    """Static: every module a chapter imports exists in the Colab-like environment plus lib."""
    # What the setup cells add to Colab: lib's own dependencies, and those of the extras a chapter's
    # setup cell asks for (chapter 9: `[pretrained]`); lib itself is checked above.
    import tomllib

    with open(REPO / "pyproject.toml", "rb") as f:
        project = tomllib.load(f)["project"]
    dependencies = list(project["dependencies"])
    for chapter in chapters():
        nb = nbformat.read(chapter, as_version=4)
        for extra in setup_extras(nb.cells[first_code_cell(nb)].source):
            dependencies += project["optional-dependencies"][extra]
    _run([str(colab["python"]), "-m", "pip", "install", "-q", *dependencies], timeout=INSTALL_TIMEOUT_S)
    missing = {}
    for chapter in chapters():
        modules = sorted(_imported_modules(nbformat.read(chapter, as_version=4)) - {"lib"})
        probe = _run(
            [
                str(colab["python"]),
                "-c",
                "import importlib.util, json, sys; "
                "print(json.dumps([m for m in sys.argv[1:] if importlib.util.find_spec(m) is None]))",
                *modules,
            ],
            cwd=colab["root"],
        )
        if absent := json.loads(probe.stdout):
            missing[chapter.name] = absent
    assert not missing, f"chapters import modules that Colab does not have (and lib does not bring): {missing}"
