"""analysis/subtree.py: the walk rules use to read a subtree without a libcst visitor."""

from __future__ import annotations

import libcst as cst

from torchlint.analysis.subtree import parts, preorder


def _names(root: cst.CSTNode, enter_calls: bool = True) -> list[str]:
    found: list[str] = []

    def enter(node: cst.CSTNode) -> bool:
        if type(node) is cst.Name:
            found.append(node.value)
        return enter_calls or type(node) is not cst.Call

    preorder(root, enter)
    return found


def test_parts_skip_layout_and_keep_code() -> None:
    call = cst.parse_expression("f( a , key = b )")
    assert isinstance(call, cst.Call)
    kinds = [type(p).__name__ for p in parts(call)]
    assert kinds == ["Name", "Arg", "Arg"]  # no whitespace, commas or parentheses
    keyword = parts(call)[2]
    assert [type(p).__name__ for p in parts(keyword)] == ["Name", "Name"]  # value, keyword


def test_preorder_goes_parents_first_in_statement_order() -> None:
    module = cst.parse_module("x = a.b\nif c:\n    y = d(e)\nelse:\n    z = f\n")
    assert _names(module) == ["x", "a", "b", "c", "y", "d", "e", "z", "f"]


def test_preorder_does_not_enter_what_enter_refuses() -> None:
    module = cst.parse_module("x = g(h(i))\ny = j\n")
    assert _names(module, enter_calls=False) == ["x", "y", "j"]


def test_comments_and_strings_hold_no_names() -> None:
    module = cst.parse_module("# model = 1\nx = 'model'  # loss\n")
    assert _names(module) == ["x"]
