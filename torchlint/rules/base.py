"""What a rule is, and what it gets to look at."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import ClassVar

import libcst as cst

from torchlint.analysis.collect import ModuleFacts
from torchlint.analysis.links import ObjectLinks
from torchlint.analysis.loops import IterEvent, LoopModel, LoopModels
from torchlint.analysis.positions import PositionIndex
from torchlint.analysis.resolve import Roles
from torchlint.analysis.training import does_step_work
from torchlint.diagnostics import Applicability, Edit, Fix, Location, Severity


class Rule:
    """One check. Subclasses set the class attributes and implement `check`."""

    code: ClassVar[str]
    name: ClassVar[str]
    family: ClassVar[str]  # "loop" | "amp" | "speed" | "data" | "api" | "syntax"
    severity: ClassVar[Severity]
    summary: ClassVar[str]  # one line, shown by `torchlint rules` and in SARIF
    default_enabled: ClassVar[bool] = True
    fixable: ClassVar[bool] = False
    # The oldest PyTorch for which the rule's advice holds (None: any). With a lower
    # `target-torch-version` in the configuration, the rule stays silent.
    min_torch: ClassVar[tuple[int, int] | None] = None

    def check(self, ctx: RuleContext) -> None:
        raise NotImplementedError


@dataclass(frozen=True)
class Finding:
    """What a rule reports, before positions are resolved into a Diagnostic."""

    rule: type[Rule]
    node: cst.CSTNode
    message: str
    fix: Fix | None = None
    related: tuple[tuple[str, Location], ...] = ()


@dataclass
class RuleContext:
    facts: ModuleFacts
    roles: Roles
    loops: LoopModels
    positions: PositionIndex
    filename: str
    # `target-torch-version`, for rules whose advice depends on the release (None: not set).
    target_torch: tuple[int, int] | None = None
    findings: list[Finding] = field(default_factory=list)
    # Derived facts several rules share (computed by the first rule that needs them).
    memo: dict[str, object] = field(default_factory=dict)
    _rule: type[Rule] | None = None

    def report(
        self,
        node: cst.CSTNode,
        message: str,
        fix: Fix | None = None,
        related: Iterable[tuple[str, Location]] = (),
    ) -> None:
        assert self._rule is not None
        self.findings.append(Finding(self._rule, node, message, fix, tuple(related)))

    # --- helpers for messages and fixes ------------------------------------------------

    @property
    def step_loops(self) -> list[LoopModel]:
        """The loops that do a training step's work themselves (not epoch loops around them)."""
        loops = self.memo.get("step_loops")
        if not isinstance(loops, list):
            loops = [m for m in self.loops.all if does_step_work(m, self.roles)]
            self.memo["step_loops"] = loops
        return loops

    @property
    def links(self) -> ObjectLinks:
        """What names hold across the module's functions (computed once, shared by rules)."""
        links = self.memo.get("links")
        if not isinstance(links, ObjectLinks):
            links = ObjectLinks(self.facts)
            self.memo["links"] = links
        return links

    def line_of(self, node: cst.CSTNode) -> int:
        return self.positions.row(node)

    def text(self, node: cst.CSTNode) -> str:
        return self.positions.text(node)

    def where(self, event: IterEvent) -> str:
        """' (in `evaluate()`, line 41)' when the event is reached through a call, else ''."""
        callee = event.event.scope
        if event.via_call is None:
            return ""
        return f" (in {callee.display_name}, line {self.line_of(event.event.node)})"

    def replace(self, node: cst.CSTNode, content: str) -> Edit:
        span = self.positions.span(node)
        return Edit(content, span.start, span.end)

    def insert_at(self, location: Location, content: str) -> Edit:
        return Edit(content, location, location)

    def fix(self, applicability: Applicability, message: str, *edits: Edit) -> Fix:
        return Fix(applicability, message, tuple(edits))
