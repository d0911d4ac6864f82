"""TL207: after `scaler.unscale_(optimizer)`, a branch skips `scaler.update()`."""

from __future__ import annotations

import re

import libcst as cst

from torchlint.analysis.loops import IterEvent, LoopModel
from torchlint.analysis.model import GuardFrame, GuardKind, Kind
from torchlint.analysis.syntax import block_ends_with
from torchlint.analysis.training import iterates_steps
from torchlint.diagnostics import Severity
from torchlint.rules.base import Rule, RuleContext

# One guard an update sits under and the unscale does not: the `if`, and its branch.
_Guard = tuple[int, int]


class ScalerUpdateSkipped(Rule):
    code = "TL207"
    name = "scaler-update-skipped"
    family = "amp"
    severity = Severity.ERROR
    summary = (
        "After `scaler.unscale_(optimizer)`, a branch (a large gradient norm, a NaN check, "
        "`continue`) skips `scaler.update()`: the next iteration's `unscale_` raises."
    )

    def check(self, ctx: RuleContext) -> None:
        for model in ctx.loops.all:
            if not iterates_steps(model):
                continue
            for unscale in model.events:
                if unscale.kind is not Kind.SCALER_UNSCALE or unscale.depth != 0:
                    continue
                updates = _updates_after(model, unscale)
                if not updates:
                    continue  # no update at all: TL202's finding
                skip = _uncovered(ctx, model, unscale, updates)
                if skip is None:
                    continue
                update = ctx.text(updates[0].event.node)
                test = skip.condition or "its test"
                if skip.branch == 0:
                    how = f"`{update}` runs only when `{test}` holds"
                elif _ends_with_continue(skip.node):
                    how = f"the `continue` under `if {test}:` skips `{update}`"
                else:
                    how = f"`{update}` runs only when `{test}` is false"
                ctx.report(
                    unscale.event.node,
                    f"`{ctx.text(unscale.event.node)}`{ctx.where(unscale)} runs in each "
                    f"iteration of the {model.loop.label}, but {how}: without the update the "
                    "scaler keeps the optimizer marked as unscaled, and the next iteration's "
                    "`unscale_` raises 'unscale_() has already been called on this optimizer "
                    "since the last update()'; call the update on every path (skip only the "
                    "step), or take the skip decision before `unscale_`.",
                )


def _updates_after(model: LoopModel, unscale: IterEvent) -> list[IterEvent]:
    """The scaler updates later in the iteration (of any scaler: a helper may name it
    differently, and code with two scalers is rare enough to accept a miss there)."""
    return [
        e
        for e in model.events[unscale.index + 1 :]
        if e.kind is Kind.SCALER_UPDATE and e.depth == 0 and not e.exclusive_with(unscale)
    ]


def _uncovered(
    ctx: RuleContext, model: LoopModel, unscale: IterEvent, updates: list[IterEvent]
) -> GuardFrame | None:
    """The first data-dependent branch after the unscale on which no update runs, or None
    when every path from the unscale reaches one."""
    loop_text = ctx.text(model.loop.node)
    mine = {(id(g.node), g.branch) for g in unscale.guards}
    tests = {(g.condition, g.branch) for g in unscale.guards if g.condition}
    frames: dict[int, GuardFrame] = {}
    paths: list[tuple[_Guard, ...]] = []
    for update in updates:
        path = []
        for g in update.guards:
            if (id(g.node), g.branch) in mine:
                continue
            if (g.condition, g.branch) in tests and not _reset_between(ctx, g, unscale, update):
                continue  # two `if`s with one test (`if not skip:` around each) agree
            if not _skips(g, loop_text):
                continue
            frames[id(g.node)] = g
            path.append((id(g.node), g.branch))
        paths.append(tuple(path))
    node = _first_gap(paths)
    return None if node is None else frames[node]


def _first_gap(paths: list[tuple[_Guard, ...]]) -> int | None:
    """The `if` whose two branches do not both reach an update, or None when one path has no
    extra guard or every `if` in the way reaches one on both sides."""
    if any(not p for p in paths):
        return None
    by_if: dict[int, dict[int, list[tuple[_Guard, ...]]]] = {}
    for p in paths:
        (node, branch), rest = p[0], p[1:]
        by_if.setdefault(node, {}).setdefault(branch, []).append(rest)
    gap: int | None = None
    for node, branches in by_if.items():
        both = 0 in branches and 1 in branches
        if both and _first_gap(branches[0]) is None and _first_gap(branches[1]) is None:
            return None
        if gap is None:
            gap = node
    return gap


def _skips(guard: GuardFrame, loop_text: str) -> bool:
    """A test decided by the iteration's data (a norm, a NaN check, a flag the loop sets),
    whose skipping path goes on with the loop: not a configuration switch (`if use_amp:`),
    nor a branch after `if ...: return` / `raise` (the loop ends there)."""
    if guard.kind is GuardKind.CONFIG:
        if not any(_assigns(loop_text, name) for name in guard.reads):
            return False
    elif guard.kind is not GuardKind.OTHER:
        return False
    if guard.branch == 1 and type(guard.node) is cst.If:
        return not block_ends_with(guard.node.body, (cst.Return, cst.Raise))
    return True


def _reset_between(
    ctx: RuleContext, guard: GuardFrame, unscale: IterEvent, update: IterEvent
) -> bool:
    """Whether a name the test reads is set again between the unscale and the update
    (`skip = True` after a large gradient norm), so that the second `if` may decide
    otherwise than the first."""
    if unscale.event.scope is not update.event.scope:
        return False
    first, last = ctx.line_of(unscale.event.node), ctx.line_of(update.event.node)
    text = "\n".join(ctx.facts.parsed.lines.line(row) for row in range(first + 1, last))
    return any(_assigns(text, name) for name in guard.reads)


def _assigns(text: str, name: str) -> bool:
    """Whether the loop's code sets `name` (`skip = True`, not `skip == ...`)."""
    return re.search(rf"(?<![\w.]){re.escape(name)}\s*=(?!=)", text) is not None


def _ends_with_continue(node: cst.CSTNode) -> bool:
    return type(node) is cst.If and block_ends_with(node.body, (cst.Continue,))
