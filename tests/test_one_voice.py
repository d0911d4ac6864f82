"""One voice: applying one rule's fix never creates another finding. For every fix torchlint
offers on the rule cases (tests/cases/) and on the rule docs' examples (rules/), the fix is
applied alone and the result checked again with every rule: no code may then report more
findings than before (TL108's `.detach()` must not become a TL301 `.item()`, TL106's
`@torch.no_grad()` must not land on a function that also trains, ...)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from torchlint.diagnostics import Diagnostic
from torchlint.docs import CHECKOUT_DOCS, doc_examples
from torchlint.engine import analyze
from torchlint.fixer import apply_edits
from torchlint.selection import RuleSelection

ALL = RuleSelection(select=("ALL",))
CASES = Path(__file__).parent / "cases"


def _sources() -> list[tuple[str, str]]:
    sources = [
        (f"{p.parent.name}/{p.name}", p.read_text(encoding="utf-8"))
        for p in sorted(CASES.glob("TL*/*.py"))
        if not p.stem.startswith("silent_")
    ]
    for doc in sorted(CHECKOUT_DOCS.glob("TL*.md")):
        for number, block in enumerate(doc_examples(doc.read_text(encoding="utf-8"))["example"]):
            sources.append((f"{doc.stem}#{number + 1}", block))
    return sources


SOURCES = _sources()


def _fixes(source: str, name: str) -> list[Diagnostic]:
    return [d for d in analyze(source, name, ALL) if d.fix is not None and d.fix.edits]


def _counts(diagnostics: list[Diagnostic]) -> Counter[str]:
    return Counter(d.code for d in diagnostics)


@pytest.mark.parametrize(("name", "source"), SOURCES, ids=[n for n, _ in SOURCES])
def test_no_fix_creates_another_finding(name: str, source: str) -> None:
    before = analyze(source, name, ALL)
    counts = _counts(before)
    for diagnostic in before:
        if diagnostic.fix is None or not diagnostic.fix.edits:
            continue
        fixed = apply_edits(source, diagnostic.fix.edits)
        after = _counts(analyze(fixed, name, ALL))
        grown = {code: after[code] - counts[code] for code in after if after[code] > counts[code]}
        assert not grown, (
            f"the {diagnostic.code} fix at line {diagnostic.location.row} "
            f"({diagnostic.fix.message}) creates {grown}:\n{fixed}"
        )


def test_the_sweep_applies_fixes() -> None:
    """The sweep is not vacuous: most rules with a fix have one on some source here."""
    fixed_codes = {d.code for name, source in SOURCES for d in _fixes(source, name)}
    assert len(fixed_codes) >= 8, fixed_codes
