"""Real bug fixes from public history, reproduced: each tests/regressions/<id>/ holds a small
program written for this project in the shape of the bug (before.py) and of its fix (after.py);
tests/regressions/cases.toml says where the real fix is and what today's engine does with the
reproduction.

A ratchet, in both directions: a case recorded as detected must keep firing on before.py and stay
silent on after.py; a case recorded as missed must not start being detected without the manifest
saying so; a fixed version must never get the finding, unless the manifest records that known
false alarm (`after_fires`), which must then not silently disappear either. Improving the engine
therefore means updating cases.toml, so progress is written down. The real files before and after
each fix are checked by benchmarks/bugfixes/run.py."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pytest

from torchlint.engine import analyze

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10: tomli is a dependency there
    import tomli as tomllib

ROOT = Path(__file__).parent / "regressions"
CASES: list[dict[str, Any]] = tomllib.loads((ROOT / "cases.toml").read_text(encoding="utf-8"))[
    "case"
]
REQUIRED = ("id", "repository", "commit", "parent", "path", "rule", "description", "detected")


def _hits(case: dict[str, Any], side: str) -> list[int]:
    """Rows of the case's code (and `match`, when given) in before.py or after.py."""
    path = ROOT / case["id"] / f"{side}.py"
    found = analyze(path.read_text(encoding="utf-8"), str(path))
    match = case.get("match", "")
    return [d.location.row for d in found if d.code == case["code"] and match in d.message]


def test_manifest_is_well_formed() -> None:
    assert len(CASES) >= 30
    ids = [case["id"] for case in CASES]
    assert len(ids) == len(set(ids)), "case ids must be unique"
    for case in CASES:
        missing = [key for key in REQUIRED if key not in case]
        assert not missing, f"{case.get('id')}: missing {missing}"
        for key in ("commit", "parent"):
            assert re.fullmatch(r"[0-9a-f]{40}", case[key]), f"{case['id']}: {key} is not a sha"
        assert case["commit"] != case["parent"], case["id"]
        assert re.fullmatch(r"[\w.-]+/[\w.-]+", case["repository"]), case["id"]
        if "batch" in case:  # what the engine did when it first saw the case, kept as it was
            assert re.fullmatch(r"\d{4}-\d{2}\w*", case["batch"]), case["id"]
            for key in ("first_detected", "first_real_detected"):
                assert isinstance(case.get(key), bool), f"{case['id']}: {key} must be recorded"
        if "code" in case:
            assert re.fullmatch(r"TL\d{3}", case["code"]), case["id"]
        else:
            assert not case["detected"], f"{case['id']}: no rule exists, it cannot be detected"
            assert not case.get("after_fires"), case["id"]


def test_every_reproduction_has_a_case_and_both_versions() -> None:
    folders = {p.name for p in ROOT.iterdir() if p.is_dir()}
    assert folders == {case["id"] for case in CASES}
    for case in CASES:
        before = (ROOT / case["id"] / "before.py").read_text(encoding="utf-8")
        after = (ROOT / case["id"] / "after.py").read_text(encoding="utf-8")
        assert before != after, f"{case['id']}: the fix must change the program"
        compile(before, f"{case['id']}/before.py", "exec")
        compile(after, f"{case['id']}/after.py", "exec")


@pytest.mark.parametrize("case", CASES, ids=lambda case: case["id"])
def test_reproduction_matches_the_record(case: dict[str, Any]) -> None:
    if "code" not in case:
        # No rule yet: nothing can fire. The case waits for its rule (`rule` names it).
        return
    before, after = _hits(case, "before"), _hits(case, "after")
    detected = bool(before) and not after
    if case.get("after_fires"):
        assert after, (
            f"{case['id']}: the fixed version is no longer reported (progress): remove "
            "after_fires from tests/regressions/cases.toml"
        )
    else:
        assert not after, f"{case['id']}: the fixed version gets {case['code']} at rows {after}"
    if case["detected"]:
        assert detected, f"{case['id']}: {case['code']} no longer fires on the bug"
    else:
        assert not detected, (
            f"{case['id']}: now detected (rows {before}): set detected = true in "
            "tests/regressions/cases.toml"
        )
