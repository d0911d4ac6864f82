"""The TLR codes live in one registry (torchlint/runtime/codes.py): every code the runtime's
sources name is registered, and each page of docs/runtime*.md shows exactly the registry's table
for its check."""

from __future__ import annotations

import re
from pathlib import Path

from torchlint.runtime.codes import CODES, table

ROOT = Path(__file__).resolve().parents[2]
PAGES = ("runtime.md", "runtime-fit.md", "runtime-lr-find.md", "runtime-profile.md")


def test_every_code_in_the_sources_is_registered() -> None:
    named: set[str] = set()
    for path in (ROOT / "torchlint").rglob("*.py"):
        if path.name != "codes.py":
            named |= set(re.findall(r'"(TLR\d{3})"', path.read_text()))
    assert len(named) >= 40  # the scan itself works
    assert named <= set(CODES), named - set(CODES)


def test_each_page_shows_the_registry_table_of_its_codes() -> None:
    for page in PAGES:
        text = (ROOT / "docs" / page).read_text()
        start = text.index("| Code | Name | Severity | Where |")
        end = text.find("\n\n", start)
        shown = text[start : end if end != -1 else None].strip()
        assert shown == table(page), f"docs/{page}: regenerate its codes table from codes.py"
    assert {c.page for c in CODES.values()} <= set(PAGES)
