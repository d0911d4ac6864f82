"""Whole-project analysis on fixture projects (tests/projects/): calls followed into other
files through packages, `src/` layouts, relative imports, re-exports, circular imports and
names that shadow project modules.

Every line of every fixture file states what is reported there: `# project: TL105` with the
project, `# alone: TL106` when the file is analysed on its own. Nothing else may be reported,
so each fixture is both must-fire and must-not-fire."""

from __future__ import annotations

import ast
import re
import shutil
import tempfile
import warnings
from pathlib import Path

import hypothesmith
import pytest
from hypothesis import given

from torchlint.engine import analyze_source
from torchlint.project.exports import read_exports, resolve_relative
from torchlint.project.layout import ProjectLayout, find_project_root
from torchlint.project_view import AnalysisProject, open_project

PROJECTS = Path(__file__).parent / "projects"
MARK = re.compile(r"\b(alone|project): ((?:TL\d{3}[ ,]*)+)")


def _expected(path: Path, mode: str) -> set[tuple[int, str]]:
    found = set()
    for row, line in enumerate(path.read_text().splitlines(), start=1):
        for match in MARK.finditer(line):
            if match.group(1) == mode:
                found |= {(row, code) for code in re.findall(r"TL\d{3}", match.group(2))}
    return found


def _files(project: str) -> list[Path]:
    return sorted((PROJECTS / project).rglob("*.py"))


FIXTURES = sorted(p.name for p in PROJECTS.iterdir() if p.is_dir())
CASES = [(project, file) for project in FIXTURES for file in _files(project)]


def _analyze(path: Path, project: AnalysisProject | None):
    return analyze_source(path.read_text(), str(path), project=project)


@pytest.fixture(scope="module")
def projects() -> dict[str, AnalysisProject]:
    return {name: open_project(ProjectLayout.at(PROJECTS / name)) for name in FIXTURES}


def test_every_fixture_project_is_covered() -> None:
    assert {"package", "src_layout", "relative", "circular", "shadowing"} <= set(FIXTURES)
    marked = {p for p, f in CASES if _expected(f, "project") or _expected(f, "alone")}
    assert marked == set(FIXTURES)


@pytest.mark.parametrize(
    ("project", "path"), CASES, ids=[f"{p}/{f.relative_to(PROJECTS / p)}" for p, f in CASES]
)
def test_findings_with_and_without_the_project(
    project: str, path: Path, projects: dict[str, AnalysisProject]
) -> None:
    with_project = _analyze(path, projects[project])
    assert with_project.errors == []
    got = {(d.location.row, d.code) for d in with_project.diagnostics}
    assert got == _expected(path, "project"), [d.message for d in with_project.diagnostics]
    alone = _analyze(path, None)
    assert {(d.location.row, d.code) for d in alone.diagnostics} == _expected(path, "alone")
    assert alone.dependencies == {}


@pytest.mark.parametrize(
    ("project", "path"), CASES, ids=[f"{p}/{f.relative_to(PROJECTS / p)}" for p, f in CASES]
)
def test_cross_file_findings_say_where_the_other_half_lives(
    project: str, path: Path, projects: dict[str, AnalysisProject]
) -> None:
    alone = {(d.location.row, d.code) for d in _analyze(path, None).diagnostics}
    for d in _analyze(path, projects[project]).diagnostics:
        if (d.location.row, d.code) in alone:
            continue
        other = re.search(r"at ([\w/]+\.py):(\d+)", d.message)
        assert other is not None, d.message
        target = PROJECTS / project / other.group(1)
        assert target.is_file()  # (this very file when reached back through a cycle)
        assert int(other.group(2)) <= len(target.read_text().splitlines())
        assert d.fix is None  # never an edit computed on another file's text


def test_messages_name_the_callee_and_its_line(projects: dict[str, AnalysisProject]) -> None:
    train = PROJECTS / "package" / "mypkg" / "train.py"
    messages = {d.code: d.message for d in _analyze(train, projects["package"]).diagnostics}
    assert "`model.eval()` (in `evaluate()` at mypkg/engine.py:5)" in messages["TL105"]
    assert "`loss.backward()` runs in `backward_only()` at mypkg/engine.py:24" in messages["TL101"]
    model = PROJECTS / "src_layout" / "scripts" / "train.py"
    found = _analyze(model, projects["src_layout"]).diagnostics
    messages = {(d.code, d.location.row): d.message for d in found}
    assert "`Classifier.forward` at src/trainer/model.py:10 returns one" in messages["TL109", 29]
    # One helper reached from two loops: each finding at its own call, in its own terms.
    assert "call `trainer.optimizer.zero_grad()`" in messages["TL102", 12]
    assert "call `self.optimizer.zero_grad()`" in messages["TL102", 47]
    assert (
        "`self.optimizer.step()` (in `Trainer.train_step()` at src/trainer/loop.py:11)"
        in (messages["TL102", 47])
    )


def test_dependencies_are_the_files_read(projects: dict[str, AnalysisProject]) -> None:
    train = PROJECTS / "package" / "mypkg" / "train.py"
    analysis = _analyze(train, projects["package"])
    names = {p.relative_to(PROJECTS / "package").as_posix() for p in analysis.dependencies}
    assert names == {"mypkg/__init__.py", "mypkg/engine.py"}
    assert all(len(h) == 32 for h in analysis.dependencies.values())


def _copy(name: str, tmp_path: Path) -> Path:
    root = tmp_path / name
    shutil.copytree(PROJECTS / name, root)
    return root


def test_a_changed_dependency_changes_the_result_and_unchanged_ones_are_reused(
    tmp_path: Path,
) -> None:
    root = _copy("package", tmp_path)
    project = open_project(ProjectLayout.at(root))
    train, engine = root / "mypkg" / "train.py", root / "mypkg" / "engine.py"
    first = _analyze(train, project)
    assert {d.code for d in first.diagnostics} == {"TL101", "TL105"}
    loaded = list(project._loaded.values())
    again = _analyze(train, project)
    assert [d.message for d in again.diagnostics] == [d.message for d in first.diagnostics]
    assert list(project._loaded.values()) == loaded  # nothing parsed twice
    engine.write_text(
        engine.read_text()
        .replace(
            "        for x, y in loader:\n            total +=",
            "        for x, y in loader:\n            total +=",
            1,
        )
        .replace("    return total\n", "    model.train()\n    return total\n", 1)
    )
    changed = _analyze(train, project)
    assert {d.code for d in changed.diagnostics} == {"TL101"}
    assert changed.dependencies[engine] != first.dependencies[engine]


@pytest.mark.parametrize(
    "engine_text",
    [
        "def evaluate(model, loader:\n",  # does not parse
        "\udcff",  # not UTF-8 once written with surrogateescape
        "",  # empty
        "from . import engine\nfrom .engine import evaluate\n",  # re-exports itself
    ],
    ids=["syntax-error", "not-utf8", "empty", "self-import"],
)
def test_a_broken_dependency_costs_only_its_calls(tmp_path: Path, engine_text: str) -> None:
    root = _copy("package", tmp_path)
    engine = root / "mypkg" / "engine.py"
    engine.write_bytes(engine_text.encode("utf-8", "surrogateescape"))
    analysis = _analyze(root / "mypkg" / "train.py", open_project(ProjectLayout.at(root)))
    assert analysis.errors == []
    assert {d.code for d in analysis.diagnostics} == set()  # the calls are opaque again


def test_a_missing_module_and_a_file_outside_the_project(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "pyproject.toml").write_text("")
    script = root / "train.py"
    script.write_text(
        "import torch\nfrom helpers import step_all\n\n\ndef fit(model, loader, optimizer):\n"
        "    for x in loader:\n        model(x).sum().backward()\n        step_all(optimizer)\n"
    )
    project = open_project(ProjectLayout.at(root))
    assert _analyze(script, project).diagnostics == []
    outside = tmp_path / "elsewhere.py"
    outside.write_text(script.read_text())
    analysis = _analyze(outside, project)
    assert analysis.diagnostics == [] and analysis.dependencies == {}


def test_layouts(tmp_path: Path) -> None:
    (tmp_path / "src" / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "scripts").mkdir()
    (tmp_path / "setup.cfg").write_text("")
    layout = ProjectLayout.for_file(tmp_path / "scripts" / "train.py")
    assert layout.root == tmp_path
    assert layout.source_roots == (tmp_path / "src", tmp_path)
    assert layout.module_name(tmp_path / "src" / "pkg" / "sub" / "m.py") == "pkg.sub.m"
    assert layout.module_name(tmp_path / "src" / "pkg" / "__init__.py") == "pkg"
    assert layout.module_name(tmp_path / "scripts" / "train.py") == "scripts.train"
    assert layout.module_name(tmp_path / "scripts" / "my-script.py") is None
    assert layout.search_path(tmp_path / "scripts" / "train.py")[0] == tmp_path / "scripts"
    assert find_project_root(tmp_path / "src" / "pkg" / "m.py") == tmp_path
    assert resolve_relative("pkg.sub", 1, "engine") == "pkg.sub.engine"
    assert resolve_relative("pkg.sub", 2, None) == "pkg"
    assert resolve_relative("pkg", 3, "x") is None


def test_exports_follow_imports_and_later_definitions() -> None:
    exports = read_exports(
        "from .engine import evaluate\nimport torch.nn as nn\nfrom a import b as c\n"
        "class T(nn.Module):\n    def fit(self): ...\n    async def go(self): ...\n"
        "def c(): ...\n",
        "pkg.mod",
        "pkg",
    )
    assert exports.aliases == {"evaluate": "pkg.engine.evaluate", "nn": "torch.nn"}
    assert exports.functions == {"c"}
    assert exports.classes["T"].methods == {"fit", "go"}
    assert exports.classes["T"].bases == ("torch.nn.Module",)
    assert read_exports("def (:", "m", "").functions == frozenset()


def test_the_two_file_example_shows_its_cross_file_leak() -> None:
    folder = Path(__file__).parent.parent / "examples" / "two_files"
    project = open_project(ProjectLayout.for_file(folder / "train.py"))
    train = _analyze(folder / "train.py", project)
    assert [(d.code, d.location.row, d.location.column) for d in train.diagnostics] == [
        ("TL105", 26, 20)
    ]
    assert "examples/two_files/engine.py:18" in train.diagnostics[0].message
    assert _analyze(folder / "engine.py", project).diagnostics == []
    assert _analyze(folder / "train.py", None).diagnostics == []


_FUZZ_ROOT = Path(tempfile.mkdtemp(prefix="torchlint-project-fuzz-"))
(_FUZZ_ROOT / "pyproject.toml").write_text("")


@given(hypothesmith.from_grammar() | hypothesmith.from_node())
def test_any_dependency_is_followed_without_raising(source: str) -> None:
    """Whatever another project file contains, a loop that calls every function and method it
    defines gets an answer, never a traceback."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # `1()` and other legal oddities
            tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        tree = ast.Module(body=[], type_ignores=[])
    functions = [n.name for n in tree.body if isinstance(n, ast.FunctionDef)][:10]
    classes = {
        n.name: [m.name for m in n.body if isinstance(m, ast.FunctionDef)][:5]
        for n in tree.body
        if isinstance(n, ast.ClassDef)
    }
    lines = ["import torch", "import engine", "", "def fit(model, loader, optimizer):"]
    lines += [f"    obj_{name} = engine.{name}(model)" for name in list(classes)[:5]]
    lines += ["    for x in loader:", "        loss = model(x).sum()", "        loss.backward()"]
    lines += [f"        engine.{name}(model, x, optimizer)" for name in functions]
    for name, methods in list(classes.items())[:5]:
        lines += [f"        obj_{name}.{method}(x)" for method in methods]
    train = "\n".join([*lines, "        optimizer.step()", ""])
    engine = _FUZZ_ROOT / "engine.py"
    engine.write_bytes(source.encode("utf-8", "surrogatepass"))
    project = open_project(ProjectLayout.at(_FUZZ_ROOT))
    analysis = analyze_source(train, str(_FUZZ_ROOT / "train.py"), project=project)
    assert analysis.errors == []
    if functions or classes:
        assert engine in analysis.dependencies  # really followed
    rows = len(train.splitlines())
    assert all(1 <= d.location.row <= rows for d in analysis.diagnostics)
