"""The functions a training framework calls once per batch, read as the body of the loop the
framework runs: a LightningModule's `training_step` (Lightning clears, backpropagates and
steps around it, unless the module turns automatic optimization off and steps its optimizers
itself), and a Hugging Face `Trainer` subclass's `compute_loss` / `training_step` (the Trainer
steps and clears after them)."""

from __future__ import annotations

import libcst as cst

from torchlint.analysis.model import ClassInfo, LoopFrame, Scope
from torchlint.analysis.names import ImportTable

# Classes whose subclasses' methods the framework runs once per batch: by the last part of
# the base's qualified name, with the library it must come from (None: any).
_LIGHTNING = "LightningModule"
_TRAINERS = ("Trainer", "Seq2SeqTrainer")
_TRAINER_LIBRARIES = ("transformers.", "trl.")
_TRAINER_STEPS = ("compute_loss", "training_step")


def framework_bodies(classes: dict[str, ClassInfo], imports: ImportTable) -> list[LoopFrame]:
    bodies = []
    for info in classes.values():
        runner = _runner(info, classes, imports, set())
        if runner == "Lightning":
            scope = info.methods.get("training_step")
            if scope is not None:
                manual = _manual_optimization(info, classes, set())
                bodies += _body(scope, runner, manual)
        elif runner == "the Trainer":
            for name in _TRAINER_STEPS:
                scope = info.methods.get(name)
                if scope is not None:
                    bodies += _body(scope, runner, False)
    return bodies


def _body(scope: Scope, runner: str, manual: bool) -> list[LoopFrame]:
    if not isinstance(scope.node, cst.FunctionDef):
        return []
    return [LoopFrame(scope.node, scope, "", False, runner=runner, manual=manual)]


def _runner(
    info: ClassInfo, classes: dict[str, ClassInfo], imports: ImportTable, seen: set[str]
) -> str | None:
    if info.name in seen:
        return None
    seen.add(info.name)
    for base in info.bases:
        if base in classes:  # a class of this module: what it derives from
            found = _runner(classes[base], classes, imports, seen)
            if found is not None:
                return found
            continue
        head, _, rest = base.partition(".")
        target = imports.aliases.get(head)
        qual = (f"{target}.{rest}" if rest else target) if target else base
        last = qual.rsplit(".", 1)[-1]
        if last == _LIGHTNING:
            return "Lightning"
        if last in _TRAINERS and qual.startswith(_TRAINER_LIBRARIES):
            return "the Trainer"
    return None


def _manual_optimization(info: ClassInfo, classes: dict[str, ClassInfo], seen: set[str]) -> bool:
    """`self.automatic_optimization = False` (or a property of that name) in the class or a
    base of this module: the module steps its optimizers itself."""
    if info.name in seen:
        return False
    seen.add(info.name)
    if "automatic_optimization" in info.attributes or "automatic_optimization" in info.methods:
        return True
    return any(_manual_optimization(classes[b], classes, seen) for b in info.bases if b in classes)
