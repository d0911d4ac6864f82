"""Shared by the runtime tests: the test scripts' folder, and the lines the scripts mark with
`# line: NAME` comments (so no test hard-codes a line number)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

SCRIPTS = Path(__file__).parent / "scripts"


def line_of(script: str, marker: str) -> int:
    """The 1-based line of `scripts/<script>.py` that ends with `# line: <marker>`."""
    lines = (SCRIPTS / f"{script}.py").read_text().splitlines()
    found = [i for i, text in enumerate(lines, 1) if text.rstrip().endswith(f"# line: {marker}")]
    assert len(found) == 1, (script, marker, found)
    return found[0]


def codes(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """An envelope's diagnostics by code (each code at most once in these scripts)."""
    found: dict[str, dict[str, Any]] = {}
    for diagnostic in result["diagnostics"]:
        assert diagnostic["code"] not in found, result["diagnostics"]
        found[diagnostic["code"]] = diagnostic
    return found


def at(diagnostic: dict[str, Any], script: str, marker: str) -> None:
    """The diagnostic points at the marked line of the script."""
    assert Path(diagnostic["filename"]).name == f"{script}.py", diagnostic
    assert diagnostic["line"] == line_of(script, marker), diagnostic
