"""TL507: `log(1 + x)`, `exp(x) - 1` and `log(sum(exp(x)))` spelled out instead of the
accurate fused functions."""

from __future__ import annotations

import libcst as cst

from torchlint.analysis.facts import ApiUse
from torchlint.analysis.positions import Anchor
from torchlint.diagnostics import Severity
from torchlint.rules.api.calls import is_one, keywords, positional, starred
from torchlint.rules.base import Rule, RuleContext
from torchlint.rules.edits import parenthesized, torch_name

# Calls that round a value to a whole number, and those whose result is one (a count).
_ROUNDING = {"torch.floor", "torch.ceil", "torch.round", "torch.trunc"}
_ROUNDING_METHODS = {"floor", "ceil", "round", "trunc", "long", "int"}
_COUNTS = {"torch.numel"}
_COUNT_METHODS = {"numel", "size"}


class UnstableLogExp(Rule):
    code = "TL507"
    name = "unstable-log-exp"
    family = "api"
    severity = Severity.WARNING
    summary = (
        "`torch.log(1 + x)`, `torch.exp(x) - 1` or `torch.log(torch.sum(torch.exp(x), dim))`: "
        "use `torch.log1p`, `torch.expm1` or `torch.logsumexp`, which do not lose precision "
        "or overflow."
    )
    fixable = True
    watches = frozenset({"torch.log", "torch.exp"})

    def check(self, ctx: RuleContext) -> None:
        for use in ctx.facts.watched_calls:
            if use.qualname == "torch.log":
                self._log(ctx, use)
            elif use.qualname == "torch.exp":
                self._exp(ctx, use)
        for call in ctx.facts.log_calls:
            self._method_chain(ctx, call)

    def _log(self, ctx: RuleContext, use: ApiUse) -> None:
        call = use.node
        assert isinstance(call, cst.Call)
        value = _single_argument(call)
        if value is None:
            return
        if type(value) is cst.BinaryOperation and type(value.operator) is cst.Add:
            x = value.right if is_one(value.left) else value.left if is_one(value.right) else None
            if x is None or self._integer_valued(ctx, x) or _count_like(ctx, x):
                return  # `log(1 + floor(n / m))`: `x` is 0 or at least 1, nothing is lost
            if _absolute(ctx, x):
                return  # `sign(x) * log(1 + |x|)`: a symmetric log compressing magnitudes
            exp_of = self._exp_argument(ctx, x)
            if exp_of is not None and not _non_positive(ctx, exp_of):
                self._softplus(ctx, call, exp_of)
                return
            torch, edits = torch_name(ctx)
            edits.append(ctx.replace(call, f"{torch}.log1p({ctx.text(x)})"))
            ctx.report(
                call,
                f"`{ctx.text(call)}` rounds `1 + x` to 1 when `x` is small, losing `x` "
                "entirely; `torch.log1p(x)` computes the same value accurately.",
                fix=ctx.fix("safe", f"Replace with `{torch}.log1p(...)`", *edits),
            )
            return
        # torch.log(torch.sum(torch.exp(x), dim))
        if type(value) is not cst.Call or ctx.facts.imports.qualify(value.func) != "torch.sum":
            return
        reduced = _sum_arguments(value)
        if reduced is None:
            return
        inner, dims = reduced
        if type(inner) is not cst.Call or ctx.facts.imports.qualify(inner.func) != "torch.exp":
            return
        x = _single_argument(inner)
        if x is None:
            return
        torch, edits = torch_name(ctx)
        replacement = f"{torch}.logsumexp({ctx.text(x)}, {_arguments(ctx, dims)})"
        edits.append(ctx.replace(call, replacement))
        ctx.report(
            call,
            f"`{ctx.text(call)}` overflows to `inf` once an element of `x` exceeds about 88 "
            "in float32 (11 in float16) unless the maximum was subtracted first; "
            "`torch.logsumexp(x, dim)` does that for you, in one call.",
            fix=ctx.fix("safe", f"Replace with `{torch}.logsumexp(...)`", *edits),
        )

    def _integer_valued(self, ctx: RuleContext, x: cst.BaseExpression) -> bool:
        if type(x) is not cst.Call:
            return type(x) is cst.Integer
        qual = ctx.facts.imports.qualify(x.func) or ""
        return _is_rounding(ctx, x) or qual in _COUNTS or _method(x) in _COUNT_METHODS

    def _exp_argument(self, ctx: RuleContext, x: cst.BaseExpression) -> cst.BaseExpression | None:
        if type(x) is cst.Call and ctx.facts.imports.qualify(x.func) == "torch.exp":
            return _single_argument(x)
        return None

    def _softplus(self, ctx: RuleContext, call: cst.Call, y: cst.BaseExpression) -> None:
        """`log(1 + exp(y))` is softplus: `log1p` would still overflow in `exp`."""
        torch, edits = torch_name(ctx)
        edits.append(ctx.replace(call, f"{torch}.nn.functional.softplus({ctx.text(y)})"))
        ctx.report(
            call,
            f"`{ctx.text(call)}` is softplus spelled out: `exp` overflows to `inf` once "
            f"`{ctx.text(y)}` exceeds about 88 in float32 (11 in float16), and `1 + x` drops "
            "small values; `torch.nn.functional.softplus(x)` computes it stably.",
            fix=ctx.fix(
                "unsafe",  # where the original overflowed to inf, softplus gives a number
                f"Replace with `{torch}.nn.functional.softplus(...)`",
                *edits,
            ),
        )

    def _exp(self, ctx: RuleContext, use: ApiUse) -> None:
        call = use.node
        assert isinstance(call, cst.Call)
        x = _single_argument(call)
        anchor = ctx.facts.anchors.get(id(call))
        if x is None or anchor is None:
            return
        path = _ancestors(anchor.node, call)  # the statement down to the call's parent
        difference = path[-1] if path else None
        if (
            type(difference) is not cst.BinaryOperation
            or difference.left is not call
            or type(difference.operator) is not cst.Subtract
            or not is_one(difference.right)
        ):
            return
        if _rounded(ctx, anchor, path[:-1]):
            return  # `round(exp(log_d) - 1)`: a whole number of frames, digits below 1 unused
        torch, edits = torch_name(ctx)
        edits.append(ctx.replace(difference, f"{torch}.expm1({ctx.text(x)})"))
        ctx.report(
            difference,
            f"`{ctx.text(difference)}` cancels almost every digit when `x` is small (`exp(x)` "
            "is close to 1); `torch.expm1(x)` computes the same value accurately.",
            fix=ctx.fix("safe", f"Replace with `{torch}.expm1(...)`", *edits),
        )

    def _method_chain(self, ctx: RuleContext, call: cst.Call) -> None:
        """`x.exp().sum(dim).log()`."""
        summed = call.func.value  # type: ignore[attr-defined]
        if type(summed) is not cst.Call or _method(summed) != "sum":
            return
        reduced = _sum_arguments(summed, receiver=True)
        if reduced is None:
            return
        exp, dims = reduced
        if type(exp) is not cst.Call or _method(exp) != "exp" or exp.args:
            return
        x = exp.func.value  # type: ignore[attr-defined]
        replacement = f"{parenthesized(ctx, x)}.logsumexp({_arguments(ctx, dims)})"
        ctx.report(
            call,
            f"`{ctx.text(call)}` overflows to `inf` once an element exceeds about 88 in "
            "float32 (11 in float16) unless the maximum was subtracted first; "
            "`.logsumexp(dim)` does that for you, in one call.",
            fix=ctx.fix("safe", "Replace with `.logsumexp(...)`", ctx.replace(call, replacement)),
        )


def _single_argument(call: cst.Call) -> cst.BaseExpression | None:
    """The argument of `f(x)`: one positional argument and nothing else."""
    if len(call.args) != 1 or call.args[0].keyword is not None or call.args[0].star:
        return None
    return call.args[0].value


def _method(call: cst.Call) -> str | None:
    return call.func.attr.value if type(call.func) is cst.Attribute else None


# `dim` and `keepdim`, as (keyword or None, value): written the way the sum had them.
_Dims = list[tuple[str | None, cst.BaseExpression]]


def _sum_arguments(
    call: cst.Call, receiver: bool = False
) -> tuple[cst.BaseExpression, _Dims] | None:
    """(what is summed, its dim and keepdim arguments) for `torch.sum(v, dim[, keepdim])`, or
    for `v.sum(dim[, keepdim])` with `receiver`; None for any other form (no dim, `dtype=`...).
    `torch.logsumexp(input, dim, keepdim)` takes them in the same order."""
    if starred(call, "*") or starred(call, "**") or not keywords(call) <= {"dim", "keepdim"}:
        return None
    args = [a.value for a in positional(call)]
    if receiver:
        args.insert(0, call.func.value)  # type: ignore[attr-defined]
    if not 1 <= len(args) <= 3:
        return None
    dims: _Dims = [(None, value) for value in args[1:]]
    dims += [(a.keyword.value, a.value) for a in call.args if a.keyword is not None]
    by_keyword = {key for key, _ in dims if key is not None}
    if (len(args) >= 2) == ("dim" in by_keyword):
        return None  # no dimension (logsumexp needs one), or the dimension twice
    if len(args) == 3 and "keepdim" in by_keyword:
        return None
    return args[0], dims


def _arguments(ctx: RuleContext, dims: _Dims) -> str:
    return ", ".join(f"{key}={ctx.text(v)}" if key else ctx.text(v) for key, v in dims)


def _non_positive(ctx: RuleContext, y: cst.BaseExpression) -> bool:
    """`-x.abs()`, `-torch.abs(x)`: `exp` of it is at most 1, so `log1p` is the stable form."""
    if type(y) is not cst.UnaryOperation or type(y.operator) is not cst.Minus:
        return False
    inner = y.expression
    if type(inner) is not cst.Call:
        return False
    if type(inner.func) is cst.Attribute and inner.func.attr.value == "abs":
        return True
    return ctx.facts.imports.qualify(inner.func) == "torch.abs"


def _absolute(ctx: RuleContext, x: cst.BaseExpression) -> bool:
    """`x.abs()`, `torch.abs(x)`, `abs(x)`: a magnitude."""
    if type(x) is not cst.Call:
        return False
    if type(x.func) is cst.Attribute and x.func.attr.value == "abs" and not x.args:
        return True
    qual = ctx.facts.imports.qualify(x.func)
    return qual in ("torch.abs", "torch.absolute") or (
        type(x.func) is cst.Name and x.func.value == "abs"
    )


_FLOATS = {"torch.float", "torch.float32", "torch.float64", "torch.double"}
_FROM_DATA = {"torch.tensor", "torch.as_tensor"}


def _count_like(ctx: RuleContext, x: cst.BaseExpression) -> bool:
    """`x` in `log(1 + x)` holds a total or whole numbers, which are 0 or not small: a sum
    (`torch.sum(attn, -1)`, `x.sum()`), or data converted to floating point right there
    (`counts.type(torch.float)`, `torch.tensor(counts, dtype=torch.float)`): the log
    compresses a magnitude and `1 + x` loses nothing that matters."""
    if type(x) is not cst.Call:
        return False
    qual = ctx.facts.imports.qualify(x.func) or ""
    method = _method(x)
    if qual == "torch.sum" or method == "sum":
        return True
    if method in ("float", "double") and not x.args:
        return True
    if method in ("type", "to"):
        return any(_is_float_dtype(ctx, a.value) for a in x.args)
    if qual in _FROM_DATA:
        return any(
            a.keyword is not None and a.keyword.value == "dtype" and _is_float_dtype(ctx, a.value)
            for a in x.args
        )
    return False


def _is_float_dtype(ctx: RuleContext, value: cst.BaseExpression) -> bool:
    return (ctx.facts.imports.qualify(value) or "") in _FLOATS


def _is_rounding(ctx: RuleContext, call: cst.Call) -> bool:
    if (ctx.facts.imports.qualify(call.func) or "") in _ROUNDING:
        return True
    return _method(call) in _ROUNDING_METHODS


def _rounded(ctx: RuleContext, anchor: Anchor, around: list[cst.CSTNode]) -> bool:
    """The value of `exp(x) - 1` (inside `around`, the nodes of its statement that hold it) is
    rounded to a whole number: in its own statement (`torch.round(torch.exp(d) - 1)`), or
    through the name the statement assigns it to (`w = (torch.exp(d) - 1) * mask` then
    `torch.ceil(w)` later in the same function)."""
    statement = anchor.node
    if any(type(n) is cst.Call and _is_rounding(ctx, n) for n in around):
        return True
    target = _assigned_name(statement)
    if target is None:
        return False
    body = _enclosing_function(ctx, anchor) or statement
    after = False
    for node in _in_order(body):
        if node is statement:
            after = True
        elif after and type(node) is cst.Call and _is_rounding(ctx, node):
            operands = [a.value for a in node.args]
            if type(node.func) is cst.Attribute:
                operands.append(node.func.value)
            if any(type(v) is cst.Name and v.value == target for v in operands):
                return True
    return False


def _assigned_name(statement: cst.CSTNode) -> str | None:
    """`name` for the anchor (a small statement) `name = ...` or `name: T = ...`."""
    if type(statement) is cst.Assign and len(statement.targets) == 1:
        target = statement.targets[0].target
    elif type(statement) is cst.AnnAssign:
        target = statement.target
    else:
        return None
    return target.value if type(target) is cst.Name else None


def _ancestors(root: cst.CSTNode, node: cst.CSTNode) -> list[cst.CSTNode]:
    """The nodes from `root` down to `node`'s parent, or [] when `node` is not under `root`."""
    parents: dict[int, cst.CSTNode] = {}
    stack = [root]
    while stack:
        current = stack.pop()
        if current is node:
            path: list[cst.CSTNode] = []
            while id(current) in parents:
                current = parents[id(current)]
                path.append(current)
            return path[::-1]
        for child in current.children:
            parents[id(child)] = current
            stack.append(child)
    return []


def _enclosing_function(ctx: RuleContext, anchor: Anchor) -> cst.FunctionDef | None:
    """The innermost function around the anchor's statement, found in its top-level block."""
    body = ctx.facts.parsed.module.body
    if not 0 <= anchor.top < len(body):
        return None
    functions = [n for n in _ancestors(body[anchor.top], anchor.node) if type(n) is cst.FunctionDef]
    return functions[-1] if functions else None


def _in_order(root: cst.CSTNode) -> list[cst.CSTNode]:
    """Every node under `root` in source order."""
    out: list[cst.CSTNode] = []
    stack = [root]
    while stack:
        node = stack.pop()
        out.append(node)
        stack.extend(reversed(node.children))
    return out
