"""What the distributed and framework rules share: the module's call sites, functions, classes
and assignments (`torchlint.analysis.sites`, recorded by the walker in its one pass), and small
helpers on callee names."""

from __future__ import annotations

import re

from torchlint.analysis.sites import Branch, CallSite, Sites
from torchlint.rules.base import RuleContext
from torchlint.rules.text import TextGate

__all__ = ["Branch", "CallSite", "Sites", "TextGate", "last", "mentions", "receiver", "sites_of"]


def sites_of(ctx: RuleContext) -> Sites:
    """The module's call sites, as the walker recorded them."""
    return ctx.facts.sites


def mentions(ctx: RuleContext, gate: re.Pattern[str] | TextGate) -> bool:
    """A cheap test on the file's text, so that a rule skips files of no framework at once."""
    text = ctx.facts.parsed.text
    if isinstance(gate, TextGate):
        return gate.admits(text)
    return gate.search(text) is not None


def last(text: str | None) -> str:
    return (text or "").rsplit(".", 1)[-1]


def receiver(text: str | None) -> str:
    """`accelerator` for `self.accelerator.gather`: the receiver's last segment."""
    parts = (text or "").split(".")
    return parts[-2] if len(parts) >= 2 else ""
