"""Which object a name holds across the functions of a module: which DataLoader feeds
which loop, which criterion a parameter is.

A loop's `sources` name what it iterates in its own scope (`loader`, `train_loader`,
`self.train_loader`). When that is a parameter, we follow the module's call sites to the argument
the caller passed, up to a few levels, until we reach the `DataLoader(...)` that built it.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from torchlint.analysis.facts import ModuleFacts
from torchlint.analysis.flow import Flow, argument_of
from torchlint.analysis.model import (
    ConstructedObject,
    Event,
    Kind,
    LoopFrame,
    Scope,
    one_per_path,
    visible_from,
)
from torchlint.analysis.names import dotted
from torchlint.analysis.resolve import call_binding
from torchlint.analysis.value import Value, What

MAX_CALL_LEVELS = 3


@dataclass(frozen=True)
class LoaderArgs:
    """The arguments of a `DataLoader(...)` call that the data rules read."""

    call: cst.Call

    def keyword(self, name: str) -> cst.BaseExpression | None:
        for arg in self.call.args:
            if arg.keyword is not None and arg.keyword.value == name:
                return arg.value
        return None

    def positional(self, index: int) -> cst.BaseExpression | None:
        """DataLoader(dataset, batch_size, shuffle, sampler, batch_sampler, num_workers, ...)."""
        positional = [a for a in self.call.args if a.keyword is None and not a.star]
        return positional[index].value if index < len(positional) else None

    def get(self, name: str, index: int) -> cst.BaseExpression | None:
        return self.keyword(name) or self.positional(index)

    @property
    def has_unpacking(self) -> bool:
        """`DataLoader(ds, **loader_kwargs)`: anything may be set."""
        return any(a.star for a in self.call.args)

    @property
    def dataset(self) -> cst.BaseExpression | None:
        return self.get("dataset", 0)


class ObjectLinks:
    """Answers `loaders_of(loop)` for one module."""

    def __init__(self, facts: ModuleFacts, flow: Flow | None = None) -> None:
        self.facts = facts
        self.flow = flow if flow is not None else Flow(facts)
        self.callers: dict[int, list[Event]] = {}
        for scope in facts.scopes:
            for event in scope.events:
                if event.kind is Kind.CALL and event.local_callee is not None:
                    self.callers.setdefault(id(event.local_callee), []).append(event)

    def loaders_of(self, loop: LoopFrame) -> list[ConstructedObject]:
        found: list[ConstructedObject] = []
        for source in loop.sources:
            for loader in self.resolve(source, loop.scope):
                if loader.role == "dataloader" and loader not in found:
                    found.append(loader)
        for value in loop.source_values:  # a loader a factory (of any project file) returns
            resolved = self.flow.resolve(value)
            site = resolved.site
            if resolved.what is not What.LOADER or not isinstance(site, cst.Call):
                continue
            if any(obj.node is site for obj in found):
                continue
            built = next((c for c in self.facts.constructed if c.node is site), None)
            if built is None:
                named_at = self._named_at(value)
                named = dotted(named_at) if isinstance(named_at, cst.BaseExpression) else None
                text = named or resolved.text or value.text or loop.iter_text
                built = ConstructedObject(
                    "dataloader",
                    text,
                    resolved.cls or "",
                    site,
                    loop.scope,
                    value=resolved,
                    named_at=named_at,
                )
            found.append(built)
        return found

    def _named_at(self, value: Value) -> cst.CSTNode | None:
        """Where this module names the value a loop iterates (following references inside
        this module: a parameter to the argument its caller passed)."""
        seen = 0
        while value.bound_at is None and value.ref is not None and seen < 4:
            seen += 1
            ref = value.ref
            if ref.how == "param" and isinstance(ref.target, Scope):
                sites = self.flow.callers_of(ref.target)
                argument = argument_of(sites[0], ref.target, ref.name) if sites else None
                if argument is None:
                    return None
                value = argument
            elif ref.how == "item" and isinstance(ref.target, Value):
                value = ref.target
            else:
                return None
        return value.bound_at

    def resolve(
        self, text: str, scope: Scope, level: int = 0, *, paths: bool = False
    ) -> list[ConstructedObject]:
        """The constructions `text` may hold in `scope`, following parameters to call sites:
        the one that last bound the name, or with `paths` the last one on each path through
        the `if` / `else` that built it (`model = A()` / `else: model = B()`)."""
        built = [c for c in self.facts.constructed if c.target == text and visible_from(c, scope)]
        if built:
            return one_per_path(built) if paths else built[-1:]
        root = text.split(".", 1)[0].split("[", 1)[0]
        if root not in scope.params or level >= MAX_CALL_LEVELS:
            return []
        result: list[ConstructedObject] = []
        for call in self.callers.get(id(scope), []):
            argument = call_binding(call, scope).get(root)
            if argument:
                result.extend(
                    self.resolve(argument + text[len(root) :], call.scope, level + 1, paths=paths)
                )
        return result
