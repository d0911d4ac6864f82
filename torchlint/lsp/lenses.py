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

from dataclasses import dataclass

import libcst as cst
from lsprotocol import types

from torchlint.analysis.collect import collect
from torchlint.analysis.loops import LoopModels
from torchlint.analysis.positions import PositionIndex
from torchlint.analysis.resolve import resolve
from torchlint.analysis.source import ParsedSource, ParseFailure, parse_source
from torchlint.analysis.training import does_step_work
from torchlint.engine import Parser, gc_paused

OVERFIT = "torchlint.runtime.overfit"
GRADS = "torchlint.runtime.grads"
PROFILE = "torchlint.runtime.profile"

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


def _is_main_guard(statement: cst.BaseStatement) -> bool:
    """`if __name__ == "__main__":` (either side of the `==`, any quotes)."""
    if not isinstance(statement, cst.If):
        return False
    test = statement.test
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return False
    target = test.comparisons[0]
    if not isinstance(target.operator, cst.Equal):
        return False
    sides = (test.left, target.comparator)
    names = [side for side in sides if isinstance(side, cst.Name) and side.value == "__name__"]
    strings = [
        side
        for side in sides
        if isinstance(side, cst.SimpleString) and side.evaluated_value == "__main__"
    ]
    return len(names) == 1 and len(strings) == 1


def find_lens_targets(text: str, parse: Parser = parse_source) -> LensTargets:
    """Where the lenses of `text` go; no lenses for a file that does not parse."""
    with gc_paused():
        parsed = parse(text)
        if isinstance(parsed, ParseFailure):
            return LensTargets()
        return _targets(parsed)


def _targets(parsed: ParsedSource) -> LensTargets:
    facts = collect(parsed)
    try:
        roles = resolve(facts)
        models = LoopModels(facts.scopes, roles)
        training = [model for model in models.all if does_step_work(model, roles)]
        if not training:
            return LensTargets()
        inside_another: set[int] = set()
        for model in training:
            inside_another |= model.inner_loops - {id(model.loop.node)}
        positions = PositionIndex(parsed, facts.anchors)
        loops = sorted(
            {
                positions.row(model.loop.node)
                for model in training
                if id(model.loop.node) not in inside_another
            }
        )
        main = next(
            (positions.row(stmt) for stmt in parsed.module.body if _is_main_guard(stmt)), None
        )
        return LensTargets(tuple(loops), main)
    finally:
        facts.release()


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
