"""The engine's contract: one TL001 for a broken file, positions, suppressions, isolation."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from torchlint.analysis.collect import classify_guard
from torchlint.analysis.model import GuardKind
from torchlint.diagnostics import Location
from torchlint.engine import analyze, analyze_bytes, analyze_source
from torchlint.rules.base import Rule, RuleContext
from torchlint.selection import RuleSelection

ALL = RuleSelection(select=("ALL",))

TRAINING = textwrap.dedent(
    """\
    import torch

    model = torch.nn.Linear(2, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x in [torch.randn(3, 2)]:
        optimizer.zero_grad()
        loss = model(x).sum()
        loss.backward()
        optimizer.step()
        print(loss.item())
    """
)


def codes(text: str, selection: RuleSelection = ALL) -> list[tuple[str, int]]:
    return [(d.code, d.location.row) for d in analyze(text, "t.py", selection)]


def test_clean_training_loop_has_only_the_sync_finding() -> None:
    assert codes(TRAINING) == [("TL301", 10)]


def test_positions_are_one_based_and_cover_the_call() -> None:
    [diag] = analyze(TRAINING, "t.py", ALL)
    assert diag.location == Location(10, 11)
    assert diag.end_location == Location(10, 22)  # `loss.item()`
    assert TRAINING.splitlines()[9][10:21] == "loss.item()"


def test_columns_count_code_points_not_bytes() -> None:
    text = TRAINING.replace("print(loss.item())", "é = 'ü'; print(loss.item())")
    [diag] = analyze(text, "t.py", ALL)
    line = text.splitlines()[diag.location.row - 1]
    assert line[diag.location.column - 1 : diag.end_location.column - 1] == "loss.item()"


@pytest.mark.parametrize(
    ("source", "row"),
    [
        ("def f(:\n    pass\n", 1),
        ("x = 1\nfor i in range(3):\nprint(i)\n", 3),
        ("x = (1,\n", 1),
        ("import torch\nfor x in y:\n    loss.backward(\n", 3),
        ("x = 1\x00\n", 1),
    ],
)
def test_syntax_error_is_exactly_one_tl001(source: str, row: int) -> None:
    diags = analyze(source, "bad.py", ALL)
    assert [(d.code, d.location.row) for d in diags] == [("TL001", row)]
    assert "Syntax error" in diags[0].message


def test_undecodable_bytes_are_one_tl001_not_an_exception() -> None:
    result = analyze_bytes(b"x = '\xff\xfe'\n", "latin.py", ALL)
    assert [d.code for d in result.diagnostics] == ["TL001"]
    assert "utf-8" in result.diagnostics[0].message.lower()


def test_coding_cookie_is_honoured() -> None:
    data = "# -*- coding: latin-1 -*-\nname = 'café'\n".encode("latin-1")
    assert analyze_bytes(data, "l.py", ALL).diagnostics == []


def test_bom_is_accepted() -> None:
    data = b"\xef\xbb\xbf" + TRAINING.encode()
    assert [(d.code, d.location.row) for d in analyze_bytes(data, "b.py", ALL).diagnostics] == [
        ("TL301", 10)
    ]


def test_empty_and_whitespace_files() -> None:
    assert analyze("", "e.py", ALL) == []
    assert analyze("\n\n   \n", "e.py", ALL) == []


@pytest.mark.parametrize(
    "comment",
    [
        "# noqa: TL301",
        "# noqa:TL301,TL101",
        "# NOQA: item-in-hot-loop",
        "# noqa",
        "# torchlint: ignore[TL301]",
        "# torchlint: ignore[item-in-hot-loop, TL101]",
    ],
)
def test_line_suppressions(comment: str) -> None:
    text = TRAINING.replace("print(loss.item())", f"print(loss.item())  {comment}")
    assert codes(text) == []


@pytest.mark.parametrize(
    "comment",
    ["# noqa: TL101", "# noqa: E501", "# torchlint: ignore[TL999]", "# nothing"],
)
def test_other_codes_do_not_suppress(comment: str) -> None:
    text = TRAINING.replace("print(loss.item())", f"print(loss.item())  {comment}")
    assert codes(text) == [("TL301", 10)]


def test_noqa_inside_a_string_does_not_suppress() -> None:
    text = TRAINING.replace("print(loss.item())", "print(loss.item(), '# noqa')")
    assert codes(text) == [("TL301", 10)]


def test_file_level_suppression() -> None:
    assert codes("# torchlint: ignore-file[TL301]\n" + TRAINING) == []
    assert codes("# torchlint: ignore-file[TL101]\n" + TRAINING) == [("TL301", 11)]
    assert codes(TRAINING + "# torchlint: ignore-file\n") == []


def test_selection_by_code_prefix_name_and_ignore() -> None:
    assert codes(TRAINING, RuleSelection(select=("TL1",))) == []
    assert codes(TRAINING, RuleSelection(select=("item-in-hot-loop",))) == [("TL301", 10)]
    assert codes(TRAINING, RuleSelection(select=("ALL",), ignore=("TL3",))) == []


def test_a_crashing_rule_is_isolated(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bug in one rule is an internal error for that rule only; the others still report."""
    from torchlint.rules.loop.missing_zero_grad import MissingZeroGrad

    def explode(self: Rule, ctx: RuleContext) -> None:
        ctx.report(ctx.facts.parsed.module, "half-written finding")
        raise RuntimeError("boom")

    monkeypatch.setattr(MissingZeroGrad, "check", explode)
    result = analyze_source(TRAINING, "t.py", ALL)
    assert [d.code for d in result.diagnostics] == ["TL301"]
    assert result.errors and "TL102" in result.errors[0] and "boom" in result.errors[0]


def test_deep_nesting_does_not_raise() -> None:
    text = "x = " + "(" * 150 + "1" + ")" * 150 + "\n"
    result = analyze_source(text, "deep.py", ALL)
    assert all(d.code == "TL001" for d in result.diagnostics)


@pytest.mark.parametrize(
    ("test", "negated", "kind"),
    [
        ("step % 100 == 0", False, GuardKind.PERIODIC),
        ("(i + 1) % accum == 0", False, GuardKind.PERIODIC),
        ("not i % log_every", False, GuardKind.PERIODIC),
        ("step % 10 != 0", True, GuardKind.PERIODIC),
        ("step % 10 != 0", False, GuardKind.OTHER),
        ("step > 0 and step % 10 == 0", False, GuardKind.PERIODIC),
        ("i == 0", False, GuardKind.PERIODIC),
        ("rank == 0", False, GuardKind.RANK),
        ("accelerator.is_main_process", False, GuardKind.RANK),
        ("writer is not None", False, GuardKind.CONFIG),
        ("args.verbose", False, GuardKind.CONFIG),
        ("loss > 10", False, GuardKind.OTHER),
        ("step >= args.warmup_steps", False, GuardKind.CONFIG),
        ("step < resume_step", True, GuardKind.CONFIG),
        ("i >= len(loader) - 1", False, GuardKind.PERIODIC),
        ("not args.distributed", False, GuardKind.CONFIG),
        # a rank named inside a comprehension, a lambda or an f-string, read from its parts
        ("all([r for r in ranks if r == local_rank])", False, GuardKind.RANK),
        ("any(x for x in xs if x)", False, GuardKind.OTHER),
        ("any({k: v for k, v in d.items() if k != rank})", False, GuardKind.RANK),
        ("check(lambda world_rank=0: world_rank)", False, GuardKind.RANK),
        ("check(lambda x: x + 1)", False, GuardKind.OTHER),
        ('check(f"node {is_main_process()}")', False, GuardKind.RANK),
        ('check(f"rank {x:>4}")', False, GuardKind.RANK),
        ('check(f"step {x:>4}")', False, GuardKind.OTHER),
    ],
)
def test_guard_classification(test: str, negated: bool, kind: GuardKind) -> None:
    import libcst as cst

    assert classify_guard(cst.parse_expression(test), negated) is kind


def test_brackets_nested_past_the_parsers_limit_are_one_tl001() -> None:
    """libcst's native parser dies with the process past ~1,000 levels; we must never get there."""
    for depth in (250, 1500, 20000):
        diags = analyze("x = " + "[" * depth + "]" * depth + "\n", "deep.py", ALL)
        assert [d.code for d in diags] == ["TL001"]
        assert "nested" in diags[0].message


def test_noqa_rows_agree_with_parser_rows_after_a_form_feed() -> None:
    text = TRAINING.replace("model = torch", "x = 1  # \x0c comment\nmodel = torch")
    text = text.replace("print(loss.item())", "print(loss.item())  # noqa: TL301")
    assert codes(text) == []


def test_target_torch_version_silences_rules_that_need_a_newer_torch() -> None:
    text = "import torch\nscaler = torch.cuda.amp.GradScaler()\n"
    assert codes(text, RuleSelection(select=("ALL",), target_torch=(2, 2))) == []
    assert codes(text, RuleSelection(select=("ALL",), target_torch=(2, 3))) == [("TL204", 2)]
    assert codes(text, RuleSelection(select=("ALL",))) == [("TL204", 2)]


def test_target_torch_version_from_pyproject(tmp_path: Path) -> None:
    import subprocess
    import sys

    (tmp_path / "pyproject.toml").write_text('[tool.torchlint]\ntarget-torch-version = "2.1"\n')
    (tmp_path / "amp.py").write_text("import torch\nscaler = torch.cuda.amp.GradScaler()\n")
    run = subprocess.run(
        [sys.executable, "-m", "torchlint", "check", "amp.py", "--output-format", "concise"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    (tmp_path / "pyproject.toml").write_text('[tool.torchlint]\ntarget-torch-version = "2.4"\n')
    run = subprocess.run(
        [sys.executable, "-m", "torchlint", "check", "amp.py", "--output-format", "concise"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 1 and "TL204" in run.stdout
