"""One lifecycle per optimizer: in one iteration of a loop, each optimizer's own clears, steps
and the backward passes that reach its parameters.

An optimizer is known by the construction its value resolves to (`values.py` / `flow.py`), else
by the receiver's text in the loop's terms; `for opt in optimizers: opt.step()` steps each of
the optimizers in the container. A backward counts for an optimizer when the loss is known to
reach the module it updates (the modules called on the way to the loss, `Value.reach`): that
is what lets a GAN loop's rules see that the discriminator's optimizer is never zeroed, or
never steps, while the generator's is fine."""

from __future__ import annotations

from dataclasses import dataclass, field

from torchlint.analysis.loops import IterEvent, LoopModel, same_object
from torchlint.analysis.model import Kind, LoopFrame
from torchlint.analysis.names import strip_module_wrapper
from torchlint.analysis.resolve import Roles
from torchlint.analysis.value import Value, What


@dataclass(eq=False)
class Lifecycle:
    """What one optimizer does in one iteration of a loop."""

    key: object
    name: str  # as the loop writes it: `opt_d`, `self.optimizer_g`
    owner: str | None  # the module it updates, as written (`critic`), when known
    steps: list[IterEvent] = field(default_factory=list)
    clears: list[IterEvent] = field(default_factory=list)  # its own `zero_grad()`s

    def __repr__(self) -> str:
        return f"Lifecycle({self.name}, owner={self.owner}, {len(self.steps)} steps)"


def lifecycles(model: LoopModel, roles: Roles) -> list[Lifecycle]:
    """The optimizers the loop's iteration steps or clears, each with its own events (computed
    once per loop)."""
    cached = model.memo.get("lifecycles")
    if isinstance(cached, list):
        return cached
    found: dict[object, Lifecycle] = {}
    aliases: dict[str, object] = {}  # receiver text -> key, once a text has been resolved
    pending: list[tuple[IterEvent, str]] = []
    for e in model.events:
        if not _optimizer_event(e, roles):
            continue
        text = _text(e.receiver)
        value = roles.object_of(e.event, e.binding)
        objects = list(value.items) if value.items else [value]
        resolved = [v for v in objects if v.what is What.OPTIMIZER and v.site is not None]
        if not resolved:
            pending.append((e, text))
            continue
        for each in resolved:
            key = id(each.site)
            aliases.setdefault(text, key)
            life = found.get(key)
            if life is None:
                name = text if len(resolved) == 1 else (each.text or text)
                life = found[key] = Lifecycle(key, name, _owner_of(each, roles, name))
            _add(life, e)
    for e, text in pending:  # not resolved: known by their text
        alias: object = aliases.get(text, text)
        life = found.get(alias)
        if life is None:
            life = found[alias] = Lifecycle(alias, text, _text_or_none(roles.optimizer_owner(text)))
        _add(life, e)
    result = list(found.values())
    model.memo["lifecycles"] = result
    return result


def _optimizer_event(e: IterEvent, roles: Roles) -> bool:
    if e.kind is Kind.STEP:
        return e.receiver is not None
    if e.kind is Kind.ZERO_GRAD and e.event.method == "zero_grad" and e.receiver:
        return roles.event_role(e.event, e.receiver, e.binding) == "optimizer"
    return False


def _add(life: Lifecycle, e: IterEvent) -> None:
    (life.steps if e.kind is Kind.STEP else life.clears).append(e)


def _owner_of(value: Value, roles: Roles, name: str) -> str | None:
    owner = value.of
    if owner is not None and owner.text:
        return _text(owner.text)
    return _text_or_none(roles.built_on(value.site) or roles.optimizer_owner(name))


def _text(text: str | None) -> str:
    text = strip_module_wrapper(text or "")
    return text[5:] if text.startswith("self.") else text


def _text_or_none(text: str | None) -> str | None:
    return _text(text) if text else None


def reaches(backward: IterEvent, life: Lifecycle) -> bool:
    """Whether the loss of `backward` is known to reach the module `life` updates: the
    module (or the optimizer's own parameters' owner) was called on the way to the loss."""
    if life.owner is None or not backward.reach:
        return False
    return any(_text(t) == life.owner or same_object(_text(t), life.owner) for t in backward.reach)


def reaches_only_others(backward: IterEvent, life: Lifecycle, others: list[Lifecycle]) -> bool:
    """Whether the loss is known to reach other optimizers' modules and not this one's."""
    if reaches(backward, life) or life.owner is None:
        return False
    return any(reaches(backward, other) for other in others if other is not life)


def clears_module(e: IterEvent, life: Lifecycle) -> bool:
    """A `model.zero_grad()` (or `p.grad = None` over `model.parameters()`) that clears the
    module `life` updates, or the whole model."""
    if e.kind is not Kind.ZERO_GRAD:
        return False
    if e.event.method == "grad":
        for frame in reversed(e.frames):
            if isinstance(frame, LoopFrame) and frame.is_param_loop:
                owner = _text(frame.iter_text.rsplit(".", 1)[0])
                return life.owner is None or owner == life.owner or "param_groups" in owner
        return False
    cleared = _text(e.receiver)
    return life.owner is None or cleared == life.owner or cleared in ("model", "module")
