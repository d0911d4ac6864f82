"""docs/runtime*.md document every runtime diagnostic the launcher can emit, with its name."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def emitted_codes() -> dict[str, str]:
    """code -> kebab-case name, from the runtime package's sources."""
    found: dict[str, str] = {}
    for path in (ROOT / "torchlint" / "runtime").glob("*.py"):
        text = path.read_text()
        for code, name in re.findall(r'"(TLR\d{3})",\s*"([a-z][a-z0-9-]*)"', text):
            found[code] = name
        for code, name in re.findall(r'"code": "(TLR\d{3})",\s*"name": "([a-z0-9-]+)"', text):
            found[code] = name
    return found


def documented_codes() -> dict[str, str]:
    """From the codes tables of docs/runtime.md and of each check's page, docs/runtime-*.md."""
    found: dict[str, str] = {}
    for path in sorted((ROOT / "docs").glob("runtime*.md")):
        text = path.read_text()
        found.update(re.findall(r"^\| (TLR\d{3}) \| ([a-z0-9-]+) \|", text, flags=re.MULTILINE))
    return found


def test_every_emitted_code_is_documented_with_its_name() -> None:
    emitted = emitted_codes()
    assert len(emitted) >= 20  # the scan itself works
    documented = documented_codes()
    assert emitted == {code: documented.get(code) for code in emitted}
    assert set(documented) == set(emitted), set(documented) ^ set(emitted)
