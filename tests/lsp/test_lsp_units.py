"""The server's pure parts: lens placement, settings, the parser choice, debug information."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types

from torchlint.analysis.source import parse_source
from torchlint.lsp import documents
from torchlint.lsp.commands import DocumentContext, debug_information
from torchlint.lsp.documents import DocumentState, ParserChoice, is_python_document
from torchlint.lsp.lenses import LensTargets, code_lenses, find_lens_targets
from torchlint.lsp.server import TorchlintServer
from torchlint.lsp.settings import (
    DEFAULT_SETTINGS,
    ClientSettings,
    SettingsStore,
    innermost_folder,
    parse_settings,
)

SETUP = """\
import torch
from torch import nn

model = nn.Linear(4, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = [(torch.randn(8, 4), torch.randn(8, 2)) for _ in range(10)]
"""


def rows_of(text: str, marker: str) -> list[int]:
    return [i + 1 for i, line in enumerate(text.splitlines()) if marker in line]


def test_lens_on_the_step_loop_not_the_epoch_loop() -> None:
    text = (
        SETUP
        + """
def train():
    for epoch in range(3):  # epoch
        for x, y in loader:  # step
            optimizer.zero_grad()
            model(x).sum().backward()
            optimizer.step()


if __name__ == "__main__":  # main
    train()
"""
    )
    targets = find_lens_targets(text)
    assert targets.loops == tuple(rows_of(text, "# step"))
    assert targets.main == rows_of(text, "# main")[0]


def test_one_lens_group_per_outermost_training_loop() -> None:
    text = (
        SETUP
        + """
def micro_batches(batch):
    for chunk in batch.split(2):  # inner, called
        model(chunk).sum().backward()


for x, y in loader:  # outer
    optimizer.zero_grad()
    for part in x.split(4):  # inner, nested
        model(part).sum().backward()
    micro_batches(x)
    optimizer.step()

for x, y in loader:  # second
    optimizer.zero_grad()
    model(x).sum().backward()
    optimizer.step()
"""
    )
    targets = find_lens_targets(text)
    assert targets.loops == tuple(rows_of(text, "# outer") + rows_of(text, "# second"))
    assert targets.main is None


def test_main_guard_spellings_and_no_training() -> None:
    plain = "def main():\n    pass\n\nif '__main__' == __name__:\n    main()\n"
    assert find_lens_targets(plain) == LensTargets()
    training = (
        SETUP
        + """
for x, y in loader:
    optimizer.zero_grad()
    model(x).sum().backward()
    optimizer.step()

if '__main__' == __name__:
    pass
if __name__ != "__main__":
    pass
"""
    )
    targets = find_lens_targets(training)
    assert targets.main == rows_of(training, "if '__main__' == __name__")[0]
    assert find_lens_targets("for x in (:\n") == LensTargets()


def test_lenses_with_a_custom_parser() -> None:
    calls: list[str] = []

    def parse(text: str):  # type: ignore[no-untyped-def]
        calls.append(text)
        return parse_source(text)

    text = SETUP + "\nfor x, y in loader:\n    model(x).sum().backward()\n    optimizer.step()\n"
    assert find_lens_targets(text, parse).loops == (8,)
    assert calls == [text]


def test_code_lenses_commands() -> None:
    lenses = code_lenses("file:///t.py", LensTargets((8,), 20))
    assert [(lens.range.start.line, lens.command and lens.command.command) for lens in lenses] == [
        (7, "torchlint.runtime.overfit"),
        (7, "torchlint.runtime.grads"),
        (7, "torchlint.runtime.child.profile"),
        (19, "torchlint.runtime.overfit"),
        (19, "torchlint.runtime.grads"),
        (19, "torchlint.runtime.child.profile"),
    ]
    assert all(
        lens.command and lens.command.arguments == ["file:///t.py", lens.range.start.line]
        for lens in lenses
    )


def test_parse_settings() -> None:
    settings, problems = parse_settings(
        {
            "enable": True,
            "run": "onSave",
            "select": "TL1, item-in-hot-loop",
            "ignore": ["TL2", 3, "bogus"],
            "severity": {"TL301": "Error", "deprecated-cuda-amp": "hint", "TL101": "loud"},
            "interpreter": ["/usr/bin/python3"],
        }
    )
    assert settings == ClientSettings(
        enable=True,
        run="onSave",
        select=("TL1", "item-in-hot-loop"),
        ignore=("TL2",),
        severity={"TL301": "error", "TL204": "hint"},
    )
    # `3` and `bogus` are named in one problem; the bad severity in another
    assert [problem.key for problem in problems] == ["ignore", "severity"]
    assert "`3`, `bogus` match no rule" in problems[0].message
    assert parse_settings(None) == (DEFAULT_SETTINGS, [])
    junk, problems = parse_settings(["not", "a", "table"])
    assert junk == DEFAULT_SETTINGS and problems
    odd, problems = parse_settings({"enable": "yes", "run": 1, "severity": [1]})
    assert odd == DEFAULT_SETTINGS and len(problems) == 3


def test_settings_per_folder() -> None:
    outer = ClientSettings(run="onSave")
    inner = ClientSettings(enable=False)
    store = SettingsStore(ClientSettings(), {"file:///w": outer, "file:///w/sub/": inner})
    assert store.for_uri("file:///w/a.py") is outer
    assert store.for_uri("file:///w/sub/b.py") is inner
    assert store.for_uri("file:///w2/c.py") is store.global_settings
    assert store.for_uri("untitled:Untitled-1") is store.global_settings
    assert innermost_folder("file:///w/a%20b.py", ["file:///w"]) == "file:///w"


def test_python_documents() -> None:
    assert is_python_document("file:///a.txt", "python")
    assert is_python_document("file:///a.PY", None)
    assert is_python_document("file:///stubs/a.pyi", "")
    assert not is_python_document("file:///a.ipynb", "jupyter")
    assert not is_python_document("file:///notes.md", "markdown")


def test_parser_choice(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(documents, "INCREMENTAL_MODULE", "torchlint.analysis.no_such_module")
    choice = ParserChoice.detect()
    assert choice.name == "parse_source" and choice.problem is None
    assert choice.new_parser() == (parse_source, None)

    class Broken:
        def __init__(self) -> None:
            raise RuntimeError("boom")

    parse, problem = ParserChoice(Broken).new_parser()
    assert parse is parse_source and problem and "boom" in problem

    class Working:
        def parse(self, text: str):  # type: ignore[no-untyped-def]
            return parse_source(text)

    parse, problem = ParserChoice(Working).new_parser()
    assert problem is None and parse is not parse_source


def test_debug_information(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.torchlint]\nselect = ["TL3"]\n')
    context = DocumentContext(
        "file:///x", tmp_path / "train.py", tmp_path, ClientSettings(ignore=("TL301",))
    )
    info = debug_information(
        parser="parse_source",
        position_encoding="utf-16",
        open_documents=1,
        folders=[],
        global_settings=DEFAULT_SETTINGS,
        document=context,
    )
    assert info["configFile"] == str(tmp_path / "pyproject.toml")
    assert info["rulesEnabled"] == ["TL302", "TL303", "TL304", "TL305", "TL306"]
    (tmp_path / "pyproject.toml").write_text('[tool.torchlint]\nselect = ["TL9"]\n')
    broken = debug_information(
        parser="parse_source",
        position_encoding="utf-16",
        open_documents=1,
        folders=[],
        global_settings=DEFAULT_SETTINGS,
        document=context,
    )
    assert "TL9" in broken["configError"]


def test_a_failing_incremental_parser_falls_back(tmp_path: Path) -> None:
    def broken(text: str):  # type: ignore[no-untyped-def]
        raise RuntimeError("incremental trouble")

    server = TorchlintServer()
    server.parsers = ParserChoice(None)
    state = DocumentState("file:///t.py", broken, incremental=True)
    context = DocumentContext("file:///t.py", tmp_path / "t.py", tmp_path, ClientSettings())
    text = SETUP + "\nfor x, y in loader:\n    model(x).sum().backward()\n    optimizer.step()\n"
    outcome = server._analyse(state, context, text, 3, "utf-16")
    assert [d.code for d in outcome.diagnostics] == ["TL102"]
    assert outcome.diagnostics[0].data["version"] == 3
    ((kind, message),) = outcome.logs
    assert kind == types.MessageType.Error and "incremental trouble" in message
    assert state.parse is parse_source  # a fresh parser (here: the plain one) from now on
    server.executor.shutdown()


def test_every_method_the_parts_call_of_each_other_is_defined_by_a_part() -> None:
    """`ServerCore` declares what one part of the server calls of another (raising
    NotImplementedError); the joined server takes each from the part that defines it."""
    from torchlint.lsp.server_core import ServerCore

    declared = [
        name
        for name, value in vars(ServerCore).items()
        if callable(value) and "NotImplementedError" in (value.__code__.co_names or ())
    ]
    assert "schedule" in declared and "notebook_of_cell" in declared
    for name in declared:
        defined = getattr(TorchlintServer, name)
        assert defined is not vars(ServerCore)[name], name
        assert defined.__module__.startswith("torchlint.lsp.server_"), name


def test_lenses_kept_while_the_loop_block_does_not_parse() -> None:
    from torchlint.analysis.source import parse_source
    from torchlint.engine import analyze_source
    from torchlint.lsp.lenses import kept_lenses
    from torchlint.lsp.partial import mask_broken_blocks

    text = (
        "import torch\n\n\n"
        "def train(model, loader, optimizer):\n"
        "    for x, y in loader:\n"
        "        optimizer.zero_grad()\n"
        "        model(x).sum().backward()\n"
        "        optimizer.step()\n\n\n"
        'if __name__ == "__main__":\n'
        "    train(None, [], None)\n"
    )
    before = find_lens_targets(text)
    assert before == LensTargets((5,), 11)
    broken = text.replace("        optimizer.step()\n", "        if x > \n")
    masked = mask_broken_blocks(broken, parse_source)
    assert masked is not None and [(b.first_row, b.last_row) for b in masked.broken] == [(2, 8)]
    analysis = analyze_source(masked.text, "t.py", parse=masked.parse, training_loops=True)
    # The loop's block does not parse: its lens and the `__main__` guard's stay.
    assert kept_lenses(analysis, before, masked.broken) == before
    # Nothing to keep when no lens was there before.
    assert kept_lenses(analysis, LensTargets(), masked.broken) == LensTargets()
