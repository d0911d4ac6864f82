"""`node_init`: libcst's node classes built through a faster `__init__` that must behave exactly
as the one `dataclasses` generated (same trees, defaults, errors, checks, frozen nodes)."""

from __future__ import annotations

import dataclasses
import inspect
import subprocess
import sys
import typing
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import libcst as cst
import pytest

from torchlint.analysis import node_init
from torchlint.analysis.source import parse_module

ROOT = Path(__file__).resolve().parent.parent


@contextmanager
def libcsts_own_inits() -> Iterator[None]:
    """libcst's own `__init__`s for a while (this test's reference), then the fast ones again."""
    fast = {cls: cls.__dict__["__init__"] for cls in node_init.replaced}
    for cls, init in node_init.replaced.items():
        cls.__init__ = init  # type: ignore[misc]
    try:
        yield
    finally:
        for cls, init in fast.items():
            cls.__init__ = init  # type: ignore[misc]


def test_installed_once_enough_source_was_parsed() -> None:
    """In a fresh process: a small file is parsed with libcst's own `__init__`s, and once
    `INSTALL_AFTER` characters have been parsed, with the fast ones."""
    script = (
        "import libcst as cst\n"
        "from torchlint.analysis import node_init\n"
        "from torchlint.analysis.source import parse_module\n"
        "own = cst.Name.__init__\n"
        "parse_module('x = 1\\n' * 100)\n"
        "print(node_init._installed, cst.Name.__init__ is own)\n"
        "parse_module('x = 1\\n' * (node_init.INSTALL_AFTER // 6))\n"
        "print(node_init._installed, cst.Name.__init__ is own,"
        " node_init.replaced[cst.Name] is own)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.split("\n")[:2] == ["False True", "True False True"]


def test_every_node_class_is_replaced_and_idempotently() -> None:
    node_init.install()
    replaced = dict(node_init.replaced)
    node_init.install()
    assert node_init.replaced == replaced  # a second install changes nothing
    for cls in (cst.Module, cst.Name, cst.Call, cst.Arg, cst.FunctionDef, cst.SimpleWhitespace):
        assert cls in replaced
        assert cls.__init__ is not replaced[cls]
        assert cls.__init__.__qualname__ == f"{cls.__qualname__}.__init__"
    # every concrete node class the parser can build has a slot for each field: all replaced
    leftovers = [
        cls
        for cls in node_init._node_classes()
        if cls.__module__.startswith("libcst._nodes")
        and "__slots__" in cls.__dict__
        and dataclasses.is_dataclass(cls)
        and "__init__" in cls.__dict__
        and cls not in replaced
    ]
    assert leftovers == []


def test_signatures_and_annotations_are_libcsts() -> None:
    """Tools that build nodes from signatures and type hints (hypothesis's `from_type`, as
    hypothesmith does) see the same parameters, defaults and annotations as before."""
    node_init.install()
    for cls, own in node_init.replaced.items():
        fast = cls.__dict__["__init__"]
        assert inspect.signature(fast) == inspect.signature(own), cls
        assert typing.get_type_hints(fast) == typing.get_type_hints(own), cls


def test_trees_are_those_libcsts_own_inits_build() -> None:
    node_init.install()
    folders = ("torchlint/analysis", "torchlint/lsp", "torchlint/rules", "examples")
    files = [path for folder in folders for path in sorted((ROOT / folder).rglob("*.py"))]
    assert len(files) > 100
    texts = [path.read_text(encoding="utf-8") for path in files]
    fast = [parse_module(text) for text in texts]
    with libcsts_own_inits():
        assert cst.Name.__init__ is node_init.replaced[cst.Name]
        reference = [cst.parse_module(text) for text in texts]
    for path, mine, theirs, text in zip(files, fast, reference, texts, strict=True):
        assert mine.deep_equals(theirs), path
        assert mine.code == text, path


def test_construction_by_hand_behaves_as_before() -> None:
    node_init.install()
    name = cst.Name("x")
    assert name.value == "x" and name.lpar == () and name.rpar == ()
    wrapped = cst.Name(value="y", lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    assert cst.Module(body=[]).code_for_node(wrapped) == "(y)"
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'value'"):
        cst.Name()  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="unexpected keyword argument"):
        cst.Name("x", colour="red")  # type: ignore[call-arg]
    with pytest.raises(cst.CSTValidationError):
        cst.Name("x y")  # libcst's checks run for nodes built outside a parse
    with pytest.raises(dataclasses.FrozenInstanceError):
        name.value = "z"  # type: ignore[misc]
    # a default factory gives every node its own default
    first, second = cst.EmptyLine(), cst.EmptyLine()
    assert first.whitespace is not second.whitespace
    assert first.whitespace.deep_equals(cst.SimpleWhitespace(""))
    given = cst.SimpleWhitespace("  ")
    assert cst.EmptyLine(whitespace=given).whitespace is given
    # `dataclasses`' own marker for "the factory's value", as tools that read signatures pass it
    marker = dataclasses._HAS_DEFAULT_FACTORY  # type: ignore[attr-defined]
    assert type(cst.Slice(None, None, first_colon=marker).first_colon) is cst.Colon
    # positional arguments keep the fields' order
    call = cst.Call(cst.Name("f"), [cst.Arg(cst.Integer("1"))])
    assert cst.Module(body=[cst.SimpleStatementLine([cst.Expr(call)])]).code == "f(1)\n"
    changed = call.with_changes(func=cst.Name("g"))
    assert cst.Module(body=[cst.SimpleStatementLine([cst.Expr(changed)])]).code == "g(1)\n"
