"""Hover: the documentation of the rule behind a finding, shown over the flagged range."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from lsprotocol import types

from torchlint.diagnostics import rule_url
from torchlint.docs import rule_doc, rule_sections
from torchlint.lsp.actions import is_ours
from torchlint.lsp.convert import range_contains
from torchlint.lsp.findings import CONFIRMED, RUNTIME_SOURCE, is_confirmed, runtime_markdown
from torchlint.rules import lookup

SECTIONS = ("What it does", "Why is this bad?", "Use instead")


@lru_cache(maxsize=64)
def rule_markdown(code: str) -> str | None:
    """`### TL301 · item-in-hot-loop`, then the doc's *What it does*, *Why is this bad?* and
    *Use instead* sections, then a link to the whole page. None for an unknown rule."""
    rule = lookup(code)
    if rule is None:
        return None
    parts = [f"### {rule.code} · `{rule.name}`"]
    doc = rule_doc(rule.code)
    sections = rule_sections(doc) if doc is not None else {}
    for title in SECTIONS:
        body = sections.get(title)
        if body:
            parts.append(f"#### {title}\n\n{body}")
    if len(parts) == 1:
        parts.append(rule.summary)
    parts.append(f"[Full documentation]({rule_url(rule.code, rule.name)})")
    return "\n\n".join(parts)


def markdown_of(diagnostic: types.Diagnostic) -> str | None:
    """A finding's hover: the rule's documentation (and, for one a run confirmed, what the run
    saw), or for a runtime finding what the run measured."""
    if diagnostic.source == RUNTIME_SOURCE:
        return runtime_markdown(diagnostic)
    text = rule_markdown(str(diagnostic.code))
    if text is not None and is_confirmed(diagnostic):
        run = diagnostic.data["confirmed"]  # type: ignore[index]
        text = (
            f"**{CONFIRMED}**: the {run.get('check')} run reported {run.get('code')}: "
            f"{run.get('message')}\n\n{text}"
        )
    return text


def hover_at(
    position: types.Position, diagnostics: Sequence[types.Diagnostic]
) -> types.Hover | None:
    """The hover for `position`: the docs of every rule flagged there (each once), or None
    where nothing is flagged."""
    found: list[types.Diagnostic] = []
    seen: set[str] = set()
    for diagnostic in diagnostics:
        ours = is_ours(diagnostic) or diagnostic.source == RUNTIME_SOURCE
        if not ours or not range_contains(diagnostic.range, position):
            continue
        code = str(diagnostic.code)
        if code not in seen:
            seen.add(code)
            found.append(diagnostic)
    texts = [text for d in found if (text := markdown_of(d)) is not None]
    if not texts:
        return None
    return types.Hover(
        contents=types.MarkupContent(
            kind=types.MarkupKind.Markdown, value="\n\n---\n\n".join(texts)
        ),
        range=found[0].range,
    )
