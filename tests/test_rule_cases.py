"""Each file under tests/cases/<CODE>/ is a small program. Lines marked `# expect: <CODE>` must get
that rule's finding; every other line must not (so each file tests recall and precision at once).
Files named `silent_*` must have no marker: they are near-misses the rule must stay quiet on."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from torchlint.engine import analyze
from torchlint.selection import RuleSelection

CASES = Path(__file__).parent / "cases"
MARKER = re.compile(r"#\s*expect:\s*(?P<codes>TL\d{3}(?:\s*,\s*TL\d{3})*)")
ALL = RuleSelection(select=("ALL",))


def _case_files() -> list[Path]:
    return sorted(CASES.glob("TL*/*.py"))


def _expected(text: str, code: str) -> list[int]:
    rows = []
    for row, line in enumerate(text.splitlines(), start=1):
        match = MARKER.search(line)
        if match:
            codes = re.split(r"\s*,\s*", match.group("codes"))
            rows.extend([row] * codes.count(code))
    return rows


@pytest.mark.parametrize("path", _case_files(), ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_case_file(path: Path) -> None:
    code = path.parent.name
    text = path.read_text()
    expected = _expected(text, code)
    if path.stem.startswith("silent_"):
        assert not expected, "silent_* cases must not carry expect markers"
    else:
        assert expected, "a case that is not silent_* must expect at least one finding"
    found = [d for d in analyze(text, str(path), ALL) if d.code == code]
    assert sorted(d.location.row for d in found) == expected, "\n".join(
        f"{d.location.row}: {d.message}" for d in found
    )


def test_every_rule_has_cases_in_three_shapes() -> None:
    """Each rule is tested on a flat script, helper functions and a Trainer class at least."""
    for folder in sorted(p for p in CASES.iterdir() if p.is_dir()):
        names = {p.stem for p in folder.glob("*.py")}
        firing = {n for n in names if not n.startswith("silent_")}
        silent = names - firing
        assert {"flat_script", "helper_functions", "trainer_class"} <= firing, folder.name
        assert len(silent) >= 2, f"{folder.name} needs near-misses that must stay silent"
