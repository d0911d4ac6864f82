"""TL503: `torch.load` without `weights_only`: on PyTorch before 2.6 it unpickles anything."""

from __future__ import annotations

import re

import libcst as cst

from torchlint.analysis.facts import ApiUse
from torchlint.analysis.names import dotted
from torchlint.diagnostics import Severity
from torchlint.rules.api.calls import add_keyword, is_literal, keyword, named, positional, starred
from torchlint.rules.base import Rule, RuleContext

_LOADS = {"torch.load", "torch.serialization.load"}
_SAVES = {"torch.save", "torch.serialization.save"}
# What `weights_only=True` refuses: a whole module, an `argparse.Namespace` or a config object
# saved in the checkpoint. Saved under such a name (or loaded and then used as a module), the
# file's checkpoints are more than tensors and primitive containers.
_OBJECT_NAMES = re.compile(
    r"(^|_)(model|net|module|args|opt|opts|config|cfg|hparams|hyper_params|namespace)$"
)
_MODULE_USES = {"eval", "train", "parameters", "named_parameters", "forward", "modules"}
# From PyTorch 2.6 `weights_only` defaults to True (unless a `pickle_module` is passed).
_SAFE_DEFAULT = (2, 6)


class UnsafeTorchLoad(Rule):
    code = "TL503"
    name = "unsafe-torch-load"
    family = "api"
    severity = Severity.WARNING
    summary = (
        "`torch.load(...)` without `weights_only=`: before PyTorch 2.6 it unpickles arbitrary "
        "objects, so a crafted checkpoint runs code when loaded."
    )
    fixable = True
    min_torch = (1, 13)  # `weights_only` exists from PyTorch 1.13
    watches = frozenset(_LOADS | _SAVES)

    def check(self, ctx: RuleContext) -> None:
        if ctx.torch_floor is not None and ctx.torch_floor >= _SAFE_DEFAULT:
            return  # every supported PyTorch defaults to `weights_only=True`
        loads = [u for u in ctx.facts.watched_calls if u.qualname in _LOADS and not u.compat]
        if not loads:
            return
        objects = _whole_objects(ctx)  # walks the module: only for files that load
        for use in loads:
            self._check(ctx, use, objects)

    def _check(self, ctx: RuleContext, use: ApiUse, objects: str | None) -> None:
        call = use.node
        assert isinstance(call, cst.Call)
        if keyword(call, "weights_only") is not None or starred(call, "**"):
            return  # an explicit choice (or maybe one, inside `**kwargs`)
        pickle_module = keyword(call, "pickle_module")
        args = positional(call)
        value = pickle_module.value if pickle_module is not None else None
        if value is None and len(args) >= 3 and not args[2].star:
            value = args[2].value
        name = named(ctx, use)
        if value is not None and not is_literal(value, "None"):
            ctx.report(
                call,
                f"{name} with a custom `pickle_module` and no `weights_only` runs the full "
                "unpickler on every PyTorch release, so a crafted checkpoint runs code when "
                "loaded; `weights_only=True` cannot be combined with a `pickle_module`: drop it "
                "and pass `weights_only=True`, or pass `weights_only=False` for a file you trust.",
            )
            return
        fix = None
        if not starred(call, "*"):  # `*args` may hold a pickle_module
            edit = add_keyword(ctx, call, "weights_only=True")
            if edit is not None:
                fix = ctx.fix("unsafe" if objects else "safe", "Add `weights_only=True`", edit)
        caveat = ""
        if objects:
            caveat = (
                f" This file's checkpoints hold whole objects ({objects}), which "
                "`weights_only=True` refuses to load: such loads already fail on PyTorch 2.6 "
                "and later, where it is the default; save state_dicts and plain values, or "
                "pass `weights_only=False` for files you trust."
            )
        ctx.report(
            call,
            f"{name} without `weights_only` unpickles arbitrary objects on PyTorch before 2.6, "
            "so a crafted checkpoint runs code when loaded; pass `weights_only=True` (or "
            f"`weights_only=False` for a file you trust that holds more than tensors).{caveat}",
            fix=fix,
        )


def _whole_objects(ctx: RuleContext) -> str | None:
    """What shows that the file's checkpoints hold more than tensors (`torch.save(model, ...)`,
    `{"args": args}` saved, a loaded value used as a module), for the message; else None."""
    for use in ctx.facts.watched_calls:
        call = use.node
        if not isinstance(call, cst.Call) or not call.args:
            continue
        if use.qualname in _SAVES:
            saved = _saved_object(call.args[0].value)
            if saved is not None:
                return f"`{saved}` saved at line {ctx.line_of(call)}"
    module_use = _module_uses_of_loads(ctx)
    if module_use is not None:
        return f"`{module_use[0]}` at line {module_use[1]} uses a loaded module"
    return None


def _saved_object(value: cst.BaseExpression) -> str | None:
    """`model` in `torch.save(model, path)`, `args` in `torch.save({"args": args, ...}, path)`."""
    if isinstance(value, cst.Name | cst.Attribute):
        text = dotted(value) or ""
        return text if _OBJECT_NAMES.search(text.rsplit(".", 1)[-1]) else None
    if type(value) is cst.Dict:
        for element in value.elements:
            if isinstance(element, cst.DictElement) and isinstance(
                element.value, cst.Name | cst.Attribute
            ):
                found = _saved_object(element.value)
                if found is not None:
                    return found
    return None


def _module_uses_of_loads(ctx: RuleContext) -> tuple[str, int] | None:
    """The first of `torch.load(path).eval()`, or `model = torch.load(path)` then
    `model.eval()`: its text and line. Read from the call sites and assignments the walker
    recorded (no second walk of the module)."""
    sites = ctx.facts.sites
    loads = {id(u.node) for u in ctx.facts.watched_calls if u.qualname in _LOADS}
    names = {name for load in loads for name in sites.targets.get(load, ())}
    found: list[tuple[int, cst.Call]] = []
    for site in sites.calls:
        func = site.call.func
        if type(func) is not cst.Attribute or func.attr.value not in _MODULE_USES:
            continue
        if id(func.value) in loads or (dotted(func.value) or "") in names:
            found.append((ctx.line_of(site.call), site.call))
    if not found:
        return None
    row, call = min(found, key=lambda item: item[0])
    return ctx.text(call), row
