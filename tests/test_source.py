"""`source.parse_module`: libcst's tree, built without libcst's node checks, which are back on
for every node built afterwards (a fix's nodes), whatever the parse did and in any thread."""

from __future__ import annotations

import threading
from pathlib import Path

import libcst as cst
import pytest

from torchlint.analysis import source
from torchlint.analysis.source import parse_module, parse_source

ROOT = Path(__file__).resolve().parent.parent


def _files() -> list[Path]:
    return (
        sorted((ROOT / "torchlint/analysis").glob("*.py"))
        + sorted((ROOT / "examples").glob("*.py"))
        + sorted((ROOT / "tests/cases").rglob("*.py"))
    )


def _checks_on() -> bool:
    """A node that breaks libcst's rules is refused at construction when the checks are on."""
    try:
        cst.Name("")
    except cst.CSTValidationError:
        return True
    return False


def test_the_tree_is_the_one_libcst_builds_with_its_checks() -> None:
    files = _files()
    assert len(files) > 200
    for path in files:
        text = path.read_text(encoding="utf-8")
        mine = parse_module(text)
        assert mine.deep_equals(cst.parse_module(text)), path
        assert mine.code == text, path
    assert _checks_on()


def test_the_checks_are_skipped_while_the_parser_builds(monkeypatch: pytest.MonkeyPatch) -> None:
    checked: list[str] = []
    original = cst.Name._validate

    def counting(self: cst.Name) -> None:
        checked.append(self.value)
        original(self)

    monkeypatch.setattr(cst.Name, "_validate", counting)
    parse_module("alpha = beta(gamma)\n")
    assert checked == []
    cst.parse_module("alpha = beta(gamma)\n")  # libcst's own parse checks each name
    assert sorted(checked) == ["alpha", "beta", "gamma"]


@pytest.mark.parametrize("text", ["def f(:\n", "x = (1,\n", "if x:\npass\n"])
def test_the_checks_come_back_after_a_parse_that_fails(text: str) -> None:
    with pytest.raises(Exception):  # noqa: B017 - libcst raises its own errors for each
        parse_module(text)
    assert _checks_on()
    assert not isinstance(parse_source(text), source.ParsedSource)
    assert _checks_on()


def test_the_checks_come_back_after_parses_in_many_threads() -> None:
    text = (ROOT / "torchlint/analysis/guards.py").read_text(encoding="utf-8")
    failures: list[BaseException] = []

    def parse_often() -> None:
        try:
            for _ in range(5):
                assert parse_module(text).code == text
        except BaseException as exc:  # reported below, in the test's own thread
            failures.append(exc)

    threads = [threading.Thread(target=parse_often) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    assert source._unchecked_parses == 0
    assert _checks_on()
