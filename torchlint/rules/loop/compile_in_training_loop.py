"""TL113: `torch.compile(model)` inside the training loop: the same model is compiled again on
every iteration or epoch."""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Mapping

import libcst as cst

from torchlint.analysis.block_split import complete_block_starts
from torchlint.analysis.names import dotted
from torchlint.analysis.source import ParsedSource
from torchlint.diagnostics import Severity
from torchlint.rules.base import Rule, RuleContext

_Loop = cst.For | cst.While


class CompileInTrainingLoop(Rule):
    code = "TL113"
    name = "compile-in-training-loop"
    family = "loop"
    severity = Severity.WARNING
    summary = (
        "`torch.compile(model)` inside a training loop: the model is wrapped and compiled "
        "again on every iteration or epoch instead of once before the loop."
    )

    def check(self, ctx: RuleContext) -> None:
        text = ctx.facts.parsed.text
        if "compile(" not in text or "backward(" not in text:
            return
        offsets = _torch_compile_offsets(text, ctx.facts.imports.aliases)
        if not offsets:
            return  # `re.compile(...)`: no need to walk the module for `torch.compile`
        module = ctx.facts.parsed.module
        statements = _statements_at(ctx.facts.parsed, offsets)
        for call, loop in _compiles_in_loops(ctx, statements):
            subject = dotted(call.args[0].value)
            if subject is None or _assigned_in(loop, subject, call):
                continue  # a fresh model each time round (a sweep over configurations)
            if "backward(" not in module.code_for_node(loop):
                continue
            kind = "iteration" if type(loop) is cst.While else "pass"
            written = ctx.text(call.func)  # `th.compile`, `compile_model`: as the code says it
            ctx.report(
                call,
                f"`{written}({subject})` runs on every {kind} of a training loop: each "
                "call builds a new compiled wrapper, which dynamo may compile again (seconds "
                "to minutes, counted against its recompilation limit), and "
                "`model = torch.compile(model)` nests one wrapper deeper each time; compile "
                "once, before the loop.",
            )


def _torch_compile_offsets(text: str, aliases: Mapping[str, str]) -> list[int]:
    """Where `text` may call `torch.compile`: `torch.compile(` (any name bound to `torch`),
    or a name bound to `torch.compile` itself followed by `(`; what `qualify` resolves to
    `torch.compile` has one of those two shapes. (In strings and comments too: a superset.)"""
    heads = [name for name, target in aliases.items() if target == "torch"]
    functions = [name for name, target in aliases.items() if target == "torch.compile"]
    if not heads and not functions:
        return []
    head = "|".join(re.escape(name) for name in heads) or "(?!)"
    function = "|".join(re.escape(name) for name in functions) or "(?!)"
    pattern = rf"\b(?:(?:{head})\b[\s\\)]*\.[\s\\]*compile|(?:{function}))[\s\\]*\("
    return [found.start() for found in re.finditer(pattern, text)]


def _statements_at(parsed: ParsedSource, offsets: list[int]) -> list[cst.BaseStatement]:
    """The top-level statements holding those offsets, in order: walking only them with a
    libcst visitor finds the same calls as walking the module (every frame the walk keeps
    opens inside a top-level statement), at a fraction of the cost in a long file. All of
    them when the block scanner and libcst disagree on where the statements are. (The
    incremental parser's split, when it made one, as `positions` reads it.)"""
    known = parsed.block_starts
    starts = list(known) if known is not None else complete_block_starts(parsed.text)
    body: list[cst.BaseStatement] = list(parsed.module.body)
    if starts is None or len(starts) != len(body):
        return body
    indices = sorted({bisect_right(starts, offset) - 1 for offset in offsets})
    return [body[i] for i in indices if 0 <= i < len(body)]


def _compiles_in_loops(
    ctx: RuleContext, statements: list[cst.BaseStatement]
) -> list[tuple[cst.Call, _Loop]]:
    """`torch.compile(x)` calls with a loop around them in their function, and no `if` between
    the loop and the call (`if self._compiled is None:` runs once)."""
    walk = _CompileCalls(ctx)
    for statement in statements:
        statement.visit(walk)
    return walk.found


class _CompileCalls(cst.CSTVisitor):
    # (A class of the module, not one defined per call: a class made per call, with methods
    # closing over the rule's context, is a reference cycle that would keep the file's whole
    # tree alive until the cyclic garbage collector ran.)
    def __init__(self, ctx: RuleContext) -> None:
        super().__init__()
        self.imports = ctx.facts.imports
        self.found: list[tuple[cst.Call, _Loop]] = []
        self.frames: list[list[cst.CSTNode]] = [[]]  # per function: the loops and ifs around

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.frames.append([])

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.frames.pop()

    def visit_For(self, node: cst.For) -> None:
        self.frames[-1].append(node)

    def leave_For(self, original_node: cst.For) -> None:
        self.frames[-1].pop()

    def visit_While(self, node: cst.While) -> None:
        self.frames[-1].append(node)

    def leave_While(self, original_node: cst.While) -> None:
        self.frames[-1].pop()

    def visit_If(self, node: cst.If) -> None:
        self.frames[-1].append(node)

    def leave_If(self, original_node: cst.If) -> None:
        self.frames[-1].pop()

    def visit_Call(self, node: cst.Call) -> None:
        around = self.frames[-1]
        if not around or not isinstance(around[-1], _Loop) or not node.args:
            return
        if self.imports.qualify(node.func) == "torch.compile":
            self.found.append((node, around[-1]))


def _assigned_in(loop: _Loop, name: str, call: cst.Call) -> bool:
    """`name` is bound in the loop by something other than the compile itself."""
    if type(loop) is cst.For and name in _names(loop.target):
        return True
    binds = _Binds(name, call)
    loop.body.visit(binds)
    return binds.bound


class _Binds(cst.CSTVisitor):
    def __init__(self, name: str, call: cst.Call) -> None:
        super().__init__()
        self.name, self.call, self.bound = name, call, False

    def visit_Assign(self, node: cst.Assign) -> None:
        if node.value is self.call:
            return
        for target in node.targets:
            if self.name in _names(target.target):
                self.bound = True


def _names(target: cst.BaseExpression) -> set[str]:
    if isinstance(target, cst.Tuple | cst.List):
        return {n for element in target.elements for n in _names(element.value)}
    text = dotted(target)
    return {text} if text is not None else set()
