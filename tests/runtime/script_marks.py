"""Shared by the runtime tests: the test scripts' folder, and the lines the scripts mark with
`# line: NAME` comments (so no test hard-codes a line number)."""

from __future__ import annotations

import functools
import math
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

SCRIPTS = Path(__file__).parent / "scripts"


@functools.cache
def hang_limit_s() -> float:
    """The time limit for a script that hangs, so that the limit strikes at the stuck line and
    not in the child's imports: 12 s, or three times what importing torch takes on this
    machine now when that is longer (about 1 s idle, 8 s and more at a load of 10 on 2 cores)."""
    started = time.monotonic()
    subprocess.run([sys.executable, "-c", "import torch"], check=True)
    return float(max(12, math.ceil(3 * (time.monotonic() - started))))


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
