"""TL503: `torch.load` without `weights_only`: on PyTorch before 2.6 it unpickles anything."""

from __future__ import annotations

import ast
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
    load_rows = {ctx.line_of(u.node) for u in ctx.facts.watched_calls if u.qualname in _LOADS}
    for text, row in _module_uses_of_loads(ctx.facts.parsed.text, load_rows):
        return f"`{text}` at line {row} uses a loaded module"
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


def _module_uses_of_loads(source: str, load_rows: set[int]) -> list[tuple[str, int]]:
    """`torch.load(path).eval()`, or `model = torch.load(path)` then `model.eval()`: each use's
    text and line. Read with CPython's `ast` (a tenth of a libcst walk): the loads are the calls
    named `load` that start on the lines of the file's `torch.load` calls."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []

    def is_load(node: ast.AST) -> bool:
        if not isinstance(node, ast.Call) or node.lineno not in load_rows:
            return False
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        return name == "load"

    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign | ast.AugAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        if is_load(value):
            for target in targets:
                elements = target.elts if isinstance(target, ast.Tuple | ast.List) else [target]
                names.update(n for n in map(_dotted_ast, elements) if n is not None)
    found: list[tuple[str, int]] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        if node.func.attr not in _MODULE_USES:
            continue
        receiver = node.func.value
        if is_load(receiver) or (_dotted_ast(receiver) or "") in names:
            found.append((ast.get_source_segment(source, node) or node.func.attr, node.lineno))
    found.sort(key=lambda item: item[1])
    return found


def _dotted_ast(node: ast.AST) -> str | None:
    """`self.model` for a chain of names and attributes; None for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted_ast(node.value)
        return f"{base}.{node.attr}" if base is not None else None
    return None
