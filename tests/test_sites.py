"""The call sites, branches and assignments the walker records in its one pass (analysis/sites.py),
and the texts `expr_text` rebuilds without generating code."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from torchlint.analysis.collect import collect
from torchlint.analysis.names import expr_text
from torchlint.analysis.sites import CallSite, Sites
from torchlint.analysis.source import ParsedSource, parse_source

SOURCE = textwrap.dedent(
    """\
    import torch.distributed as dist

    def train(rank, loader):
        if rank == 0:
            dist.barrier()
        elif rank == 1:
            log("one")
        else:
            log("others")
        if not loader:
            return
        after_exit()
        a, (b, c) = make(), (1, 2)
        x: int = count()

    class Trainer:
        def fit(self):
            self.model = build()
            def inner():
                helper()
            return inner

        class Nested:
            def run(self):
                go()

    top_level()
    """
)


def _sites(text: str) -> tuple[ParsedSource, Sites]:
    parsed = parse_source(text)
    assert isinstance(parsed, ParsedSource)
    return parsed, collect(parsed).sites


def _site(sites: Sites, callee: str) -> CallSite:
    (found,) = [s for s in sites.calls if s.callee == callee]
    return found


def test_each_call_has_its_function_class_and_if_branches() -> None:
    _, sites = _sites(SOURCE)
    barrier = _site(sites, "dist.barrier")
    assert barrier.function is sites.functions["train"]
    assert barrier.class_name is None
    assert [(type(b.node), b.branch) for b in barrier.branches] == [(cst.If, 0)]
    # `elif`: the else side of the first test, then the body of the second
    one = sites.calls[[s.callee for s in sites.calls].index("log")]
    assert [b.branch for b in one.branches] == [1, 0]
    others = [s for s in sites.calls if s.callee == "log"][1]
    assert [b.branch for b in others.branches] == [1, 1]
    # after `if not loader: return` there is no `if` branch around the call
    assert _site(sites, "after_exit").branches == ()


def test_methods_nested_functions_and_module_level_calls() -> None:
    _, sites = _sites(SOURCE)
    fit = sites.methods[("Trainer", "fit")]
    assert _site(sites, "build").function is fit
    assert _site(sites, "build").class_name == "Trainer"
    helper = _site(sites, "helper")
    assert helper.function is not fit and helper.class_name is None  # `inner`, no method
    assert _site(sites, "go").class_name == "Nested"
    assert ("Nested", "run") in sites.methods
    assert set(sites.classes) == {"Trainer"}  # top-level classes only
    assert set(sites.functions) == {"train"}
    top = _site(sites, "top_level")
    assert top.function is None and top.branches == ()


def test_assignments_are_unpacked_per_function() -> None:
    _, sites = _sites(SOURCE)
    train = sites.functions["train"]
    [a] = sites.values_of(train, "a")
    assert type(a) is cst.Call and expr_text(a) == "make()"
    assert [expr_text(v) for v in sites.values_of(train, "c")] == ["2"]
    assert [expr_text(v) for v in sites.values_of(train, "x")] == ["count()"]
    fit = sites.methods[("Trainer", "fit")]
    [model] = sites.values_of(fit, "self.model")
    assert sites.targets[id(model)] == ["self.model"]
    assert sites.values_of(None, "a") == []  # not a module-level name


def test_lambdas_are_not_walked() -> None:
    _, sites = _sites("f = lambda: hidden()\nshown()\n")
    assert [s.callee for s in sites.calls] == ["shown"]


@pytest.mark.parametrize(
    "source",
    [
        "(step+1)%accum==0",
        "not (a and b)",
        "a<b<=c",
        "x is  not None",
        "k not in d",
        "((a + b)) * c",
        "10**9",
        "-x",
        "a  or  b",
    ],
)
def test_operator_texts_are_as_written(source: str) -> None:
    node = cst.parse_expression(source)
    assert expr_text(node) == cst.Module(body=()).code_for_node(node).strip()


def test_operator_texts_across_lines_and_without_spaces() -> None:
    assert expr_text(cst.parse_expression("(x\n  + y)")) == "(x + y)"
    assert expr_text(cst.parse_expression("not(a)")) == "not a"
    assert expr_text(cst.parse_expression("not(a)")) != "nota"
