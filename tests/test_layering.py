"""The analysis and the project packages never import each other: the analysis asks for what
another file exports through `analysis.protocol.ProjectView`, the project asks of a collected file
only what `project.project.CollectedFile` says, and `torchlint.project_view` joins them."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "torchlint"


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
    return found


@pytest.mark.parametrize(
    ("package", "forbidden"),
    [("analysis", "torchlint.project"), ("project", "torchlint.analysis")],
)
def test_packages_do_not_import_each_other(package: str, forbidden: str) -> None:
    files = sorted((PACKAGE / package).rglob("*.py"))
    assert files
    offenders = {
        f"{path.relative_to(PACKAGE)} imports {name}"
        for path in files
        for name in _imports(path)
        if name == forbidden or name.startswith(forbidden + ".")
    }
    assert not offenders, sorted(offenders)


def test_the_walker_knows_no_watched_api() -> None:
    """The calls the api rules read are declared by the rules (`Rule.watches`), not listed in
    the walker or its recognisers."""
    walker = ("walk_state.py", "walk_expressions.py", "walk_simple.py", "walker.py")
    recognisers = ("recognise_statements.py", "recognise_events.py", "recognise.py")
    for name in (*walker, *recognisers, "apis.py"):
        text = (PACKAGE / "analysis" / name).read_text(encoding="utf-8")
        assert '"torch.load"' not in text, name
