"""Code lenses: where the runtime checks (overfit one batch, gradient scan, profile a step) can
be started from.

The places come from the same analysis model the rules use: a *training loop* is a loop whose
own iteration does a step's work (`does_step_work`: backward or optimizer step at its level,
or an opaque training call such as `trainer.training_step(batch)`). An epoch loop around such
a loop does not qualify itself, so the lens lands on the loop that runs the steps.

One lens group per outermost training loop: a training loop that runs inside another one's
iteration (nested, or in a function that loop calls, such as an inner gradient-accumulation
loop) gets none, since running the outer loop exercises it. A script's
`if __name__ == "__main__":` block gets a group too, when the file has a training loop at all.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from lsprotocol import types

from torchlint.analysis.source import parse_source
from torchlint.engine import Analysis, Parser, analyze_source
from torchlint.lsp.partial import BrokenBlock
from torchlint.lsp.text import shift_rows
from torchlint.selection import RuleSelection

NO_RULES = RuleSelection(select=())  # the loop model alone, no findings

OVERFIT = "torchlint.runtime.overfit"
GRADS = "torchlint.runtime.grads"
PROFILE = "torchlint.runtime.child.profile"

# (title, command), in the order the lenses are shown.
RUNTIME_COMMANDS: tuple[tuple[str, str], ...] = (
    ("Overfit one batch", OVERFIT),
    ("Gradient scan", GRADS),
    ("Profile step", PROFILE),
)


@dataclass(frozen=True)
class LensTargets:
    """1-based rows: the outermost training loops (their `for` / `while` keyword) and the
    `if __name__ == "__main__":` of a script that has a training loop."""

    loops: tuple[int, ...] = ()
    main: int | None = None

    @property
    def rows(self) -> tuple[int, ...]:
        rows = set(self.loops)
        if self.main is not None:
            rows.add(self.main)
        return tuple(sorted(rows))


def find_lens_targets(text: str, parse: Parser = parse_source) -> LensTargets:
    """Where the lenses of `text` go (none for a file that does not parse), when no lint of
    this version has located them already (see `targets_of`)."""
    return targets_of(analyze_source(text, "<lenses>", NO_RULES, parse, training_loops=True))


def targets_of(analysis: Analysis) -> LensTargets:
    """The lens targets an analysis run with `training_loops=True` found: the outermost
    training loops, and the script's `__main__` guard when it has a training loop."""
    if not analysis.training_loop_rows:
        return LensTargets()
    return LensTargets(analysis.training_loop_rows, analysis.main_guard_row)


def kept_lenses(
    analysis: Analysis, previous: LensTargets, broken: Sequence[BrokenBlock]
) -> LensTargets:
    """The lens targets of a text with broken blocks (`torchlint.lsp.partial`): the training
    loops found in the rest, and the previous ones (moved through the edits since) inside the
    broken blocks, with the `__main__` guard when there is a loop at all; so typing in a
    training loop does not make its lenses, and the code under them, jump."""
    found = targets_of(analysis)
    if not broken:
        return found

    def inside(row: int) -> bool:
        return any(block.first_row <= row <= block.last_row for block in broken)

    loops = {*found.loops, *(row for row in previous.loops if inside(row))}
    if not loops:
        return LensTargets()
    main = analysis.main_guard_row
    if main is None and previous.main is not None and inside(previous.main):
        main = previous.main
    return LensTargets(tuple(sorted(loops)), main)


def shifted(
    targets: LensTargets, changes: Sequence[types.TextDocumentContentChangeEvent]
) -> LensTargets:
    """`targets` moved through a document's changes (until its next analysis places them)."""
    if not targets.rows or not changes:
        return targets
    loops = shift_rows(targets.loops, changes)
    main = shift_rows((targets.main,), changes)[0] if targets.main is not None else None
    return LensTargets(loops, main)


def code_lenses(uri: str, targets: LensTargets) -> list[types.CodeLens]:
    """The lens group (one lens per runtime check) above each target row."""
    lenses: list[types.CodeLens] = []
    for row in targets.rows:
        line = row - 1
        place = types.Range(
            start=types.Position(line=line, character=0),
            end=types.Position(line=line, character=0),
        )
        for title, command in RUNTIME_COMMANDS:
            lenses.append(
                types.CodeLens(
                    range=place,
                    command=types.Command(title=title, command=command, arguments=[uri, line]),
                )
            )
    return lenses
