"""What a rule is, and what it gets to look at."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

import libcst as cst

from torchlint.analysis.facts import ModuleFacts
from torchlint.analysis.links import ObjectLinks
from torchlint.analysis.loops import IterEvent, LoopModel, LoopModels
from torchlint.analysis.model import Scope
from torchlint.analysis.positions import PositionIndex
from torchlint.analysis.resolve import Roles
from torchlint.analysis.training import does_step_work
from torchlint.diagnostics import Applicability, Edit, Fix, Location, Severity

if TYPE_CHECKING:
    from torchlint.analysis.protocol import ProjectView
    from torchlint.project.project import LoadedModule
    from torchlint.project_view import AnalysisProject, DependencyFile


class Rule:
    """One check. Subclasses set the class attributes and implement `check`."""

    code: ClassVar[str]
    name: ClassVar[str]
    family: ClassVar[str]  # "loop" | "amp" | "speed" | "data" | "dist" | "api" | "syntax"
    severity: ClassVar[Severity]
    summary: ClassVar[str]  # one line, shown by `torchlint rules` and in SARIF
    default_enabled: ClassVar[bool] = True
    fixable: ClassVar[bool] = False
    # The oldest PyTorch for which the rule's advice holds (None: any). With a lower
    # `target-torch-version` in the configuration, the rule stays silent.
    min_torch: ClassVar[tuple[int, int] | None] = None
    # What the rule reads besides the module's scopes and events: the qualified names of the
    # calls it looks at (`torch.load`), recorded in `facts.watched_calls` only when a selected
    # rule asks for them; a prefix covers a family (`torchvision.models.`). Adding an API rule
    # adds a name here, not a case to the walker.
    watches: ClassVar[frozenset[str]] = frozenset()
    watches_prefixes: ClassVar[tuple[str, ...]] = ()
    # The runtime codes (`torchlint run`) whose finding at the same line confirms this one
    # (torchlint.runtime.confirm).
    confirmed_by: ClassVar[tuple[str, ...]] = ()

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
    # The oldest PyTorch the code runs on: `target_torch`, else what its requirements declare.
    torch_floor: tuple[int, int] | None = None
    findings: list[Finding] = field(default_factory=list)
    # Derived facts several rules share (computed by the first rule that needs them).
    memo: dict[str, object] = field(default_factory=dict)
    # The project the file belongs to (None: the file is analysed on its own).
    project: AnalysisProject | None = None
    file_context: ProjectView | None = None  # this file's place in the project
    _rule: type[Rule] | None = None
    _foreign_edits: set[int] = field(default_factory=set)

    def report(
        self,
        node: cst.CSTNode,
        message: str,
        fix: Fix | None = None,
        related: Iterable[tuple[str, Location]] = (),
        at: cst.CSTNode | None = None,
    ) -> None:
        """Report at `node`. A node of another project file (an event a loop reaches through a
        call) is reported at that call in this file, and the message says where it lives; any
        other node of another file (a loader a factory there builds) is reported at `at`, a
        node of this file, when given."""
        assert self._rule is not None
        reached = self.loops.foreign_nodes.get(id(node))
        if reached is not None:
            original, site, event = reached
            owner = self.owner_of(original)
            if owner is None:
                return
            where = f"{owner.ref.display}:{owner.file.positions.row(original)}"
            if where not in message:
                text = owner.file.positions.text(original)
                message = f"{message} (`{text}` runs in {event.scope.display_name} at {where})"
            node, fix = site.node, None
        elif (owner := self.owner_of(node)) is not None:
            if at is None or self.owner_of(at) is not None:
                return  # a node of another file that no loop of this one reaches
            where = f"{owner.ref.display}:{owner.file.positions.row(node)}"
            message = f"{message} (`{owner.file.positions.text(node)}` at {where})"
            node, fix = at, None
        if fix is not None and any(id(edit) in self._foreign_edits for edit in fix.edits):
            fix = None  # an edit for another file's text must never be applied to this one
        self.findings.append(Finding(self._rule, node, message, fix, tuple(related)))

    def owner_of(self, node: cst.CSTNode) -> LoadedModule[DependencyFile] | None:
        """The other project file `node` belongs to, or None for this file's nodes."""
        if self.project is None or not self.project.in_use or id(node) in self.facts.anchors:
            return None
        return self.project.owner_of(id(node))

    def _located(self, node: cst.CSTNode) -> tuple[PositionIndex, cst.CSTNode, bool]:
        """Where to look `node` up: its file's positions, the node itself (the original, for a
        copy made by the loop model), and whether it is another file's."""
        reached = self.loops.foreign_nodes.get(id(node))
        if reached is not None:
            node = reached[0]
        owner = self.owner_of(node)
        return (
            (owner.file.positions if owner is not None else self.positions),
            node,
            owner is not None,
        )

    def foreign_row(self, scope: Scope, node: cst.CSTNode) -> str | None:
        """`pkg/models.py:12` for a node of a scope another project file defines, else None."""
        if scope.source is None or self.project is None:
            return None
        for loaded in self.project.in_use:
            if loaded.ref is scope.source or loaded.ref.path == scope.source.path:
                return f"{loaded.ref.display}:{loaded.file.positions.row(node)}"
        return None

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
            links = ObjectLinks(self.facts, self.roles.flow)
            self.memo["links"] = links
        return links

    def line_of(self, node: cst.CSTNode) -> int:
        """The line of `node` in its own file (this one, or another project file)."""
        positions, node, _ = self._located(node)
        return positions.row(node)

    def text(self, node: cst.CSTNode) -> str:
        positions, node, _ = self._located(node)
        return positions.text(node)

    def where(self, event: IterEvent) -> str:
        """' (in `evaluate()`, line 41)' when the event is reached through a call, or
        ' (in `evaluate()` at engine.py:41)' when that call leads into another file; else ''."""
        callee = event.event.scope
        if event.via_call is None:
            return ""
        row = self.line_of(event.event.node)
        if callee.source is not None:
            return f" (in {callee.display_name} at {callee.source.display}:{row})"
        return f" (in {callee.display_name}, line {row})"

    def replace(self, node: cst.CSTNode, content: str) -> Edit:
        positions, node, foreign = self._located(node)
        span = positions.span(node)
        edit = Edit(content, span.start, span.end)
        if foreign:
            self._foreign_edits.add(id(edit))
        return edit

    def insert_at(self, location: Location, content: str) -> Edit:
        return Edit(content, location, location)

    def fix(self, applicability: Applicability, message: str, *edits: Edit) -> Fix:
        return Fix(applicability, message, tuple(edits))
