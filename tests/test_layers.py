"""The package's layers, and the test that keeps them: every import inside torchlint (at module
level, in a function, or in a class body; not the ones only a type checker reads) goes from a
layer to the same one or one below, and no chain of imports leads back to where it started.
docs/architecture.md shows the same table (`render_contract()`), checked here too."""

from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "torchlint"
ARCHITECTURE = PACKAGE.parent / "docs" / "architecture.md"

#: bottom first: a module may import its own layer's modules and those of the layers below
LAYERS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    (
        "core",
        ("torchlint", "diagnostics", "requirements", "discovery", "cache", "integrations"),
        "findings, files, the cache; no analysis",
    ),
    ("analysis", ("analysis",), "one file: parse, walk, loop model"),
    ("project", ("project",), "other files of the project, read with `ast`"),
    ("project view", ("project_view",), "the analysis's questions answered by the project"),
    ("rules", ("rules",), "small rules over the loop model"),
    ("selection", ("selection", "suppression", "docs"), "which rules, noqa, rule pages"),
    ("configuration", ("config",), "[tool.torchlint]"),
    ("engine", ("engine",), "analyze_source: one file, every selected rule"),
    ("fixes", ("fixer", "notebook"), "--fix, notebooks"),
    ("workspace", ("workspace",), "many files, the cache, the project"),
    (
        "front ends' parts",
        ("parallel", "report", "runtime"),
        "processes, reporters, runtime checks (parent and child)",
    ),
    ("language server", ("lsp",), "pygls"),
    (
        "command line",
        (
            "cli",
            "cli_args",
            "cli_output",
            "cli_check",
            "cli_fix",
            "cli_rules",
            "cli_clean",
            "__main__",
        ),
        "torchlint check / run / lsp",
    ),
)


def _group(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "torchlint"


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for path in PACKAGE.rglob("*.py"):
        relative = path.relative_to(PACKAGE.parent).with_suffix("")
        if "boot" in relative.parts:  # sitecustomize for the run's processes, never imported
            continue
        name = ".".join(relative.parts).removesuffix(".__init__")
        found[name] = path
    return found


MODULES = _modules()


def _type_checking(node: ast.If) -> bool:
    return "TYPE_CHECKING" in ast.unparse(node.test)


def imports_of(name: str) -> set[str]:
    """The torchlint modules `name` imports anywhere in its code."""
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    todo: list[ast.AST] = [ast.parse(path.read_text(encoding="utf-8"))]
    while todo:
        node = todo.pop()
        if isinstance(node, ast.If) and _type_checking(node):
            todo.extend(node.orelse)
            continue
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names)
        todo.extend(ast.iter_child_nodes(node))
    return {m for m in found if m in MODULES and m != name}


GRAPH = {name: imports_of(name) for name in MODULES}


def _layer_of() -> dict[str, int]:
    return {group: i for i, (_, groups, _) in enumerate(LAYERS) for group in groups}


def test_every_module_has_a_layer() -> None:
    layer = _layer_of()
    assert {_group(m) for m in MODULES} <= set(layer), {_group(m) for m in MODULES} - set(layer)


def test_imports_go_down_the_layers() -> None:
    layer = _layer_of()
    upward = sorted(
        f"{a} ({LAYERS[layer[_group(a)]][0]}) imports {b} ({LAYERS[layer[_group(b)]][0]})"
        for a, targets in GRAPH.items()
        for b in targets
        if layer[_group(b)] > layer[_group(a)]
    )
    assert not upward, "\n".join(upward)


def _cycles() -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start in sorted(GRAPH):
        if start in index:
            continue
        work: list[tuple[str, list[str]]] = [(start, sorted(GRAPH[start]))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, pending = work[-1]
            if pending:
                target = pending.pop()
                if target not in index:
                    index[target] = low[target] = counter
                    counter += 1
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, sorted(GRAPH[target])))
                elif target in on_stack:
                    low[node] = min(low[node], index[target])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_cycles() -> None:
    assert _cycles() == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    """The near miss: the same search over a graph with a cycle in it reports that cycle."""
    saved = dict(GRAPH)
    try:
        GRAPH["torchlint.diagnostics"] = GRAPH["torchlint.diagnostics"] | {"torchlint.cli"}
        cycles = _cycles()
    finally:
        GRAPH.clear()
        GRAPH.update(saved)
    assert any({"torchlint.diagnostics", "torchlint.cli"} <= set(c) for c in cycles)


def test_the_static_path_of_a_cache_is_light() -> None:
    """`import torchlint.cache` (what pre-commit and the workers load first) needs only core."""
    reached: set[str] = set()
    todo = ["torchlint.cache"]
    while todo:
        module = todo.pop()
        if module not in reached:
            reached.add(module)
            todo.extend(GRAPH[module])
    assert {_group(m) for m in reached} <= set(LAYERS[0][1]), sorted(reached)


def render_contract() -> str:
    rows = ["| layer | modules | what it holds |", "| --- | --- | --- |"]
    for name, groups, what in reversed(LAYERS):
        modules = ", ".join(f"`{g}`" for g in groups)
        rows.append(f"| {name} | {modules} | {what} |")
    return "\n".join(rows)


def test_the_architecture_page_shows_the_contract() -> None:
    text = ARCHITECTURE.read_text(encoding="utf-8")
    block = re.search(r"<!-- layers: begin -->\n(.*?)\n<!-- layers: end -->", text, re.S)
    assert block is not None, "docs/architecture.md lost its layer table"
    assert block.group(1).strip() == render_contract(), (
        "docs/architecture.md's layer table differs from tests/test_layers.py; write:\n"
        + render_contract()
    )
