"""The `torchlint` command, run as a subprocess on real files."""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from snippets import CLEAN, MISSING_STEP, MISSING_STEP_AND_ITEM

from torchlint import __version__, cli, workspace
from torchlint.analysis.source import ParsedSource, parse_source

if TYPE_CHECKING:
    from conftest import RunTorchlint


# TL101 on line 7, TL301 on line 8.


DEPRECATED_SCALER = "from torch.cuda.amp import GradScaler\nscaler = GradScaler()\n"
FIXED_SCALER = 'import torch\nscaler = torch.amp.GradScaler("cuda")\n'

CONCISE_LINE = re.compile(
    r"^(?P<path>[^:]+):(?P<row>\d+):(?P<col>\d+): (?P<code>TL\d{3})( \[\*\])? .+$"
)
JSON_FIELDS = {
    "code",
    "name",
    "message",
    "severity",
    "url",
    "filename",
    "location",
    "end_location",
    "fix",
}


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def concise_lines(stdout: str) -> list[re.Match[str]]:
    lines = [line for line in stdout.splitlines() if line.strip()]
    matches = [CONCISE_LINE.match(line) for line in lines[:-1]]
    assert all(matches), stdout
    return [m for m in matches if m is not None]


# --- exit status ---------------------------------------------------------------------------


def test_exit_status_clean_finding_and_exit_zero(
    tmp_path: Path, run_torchlint: RunTorchlint
) -> None:
    write(tmp_path / "clean.py", CLEAN)
    write(tmp_path / "bad" / "train.py", MISSING_STEP)

    clean = run_torchlint("check", "clean.py", cwd=tmp_path)
    assert clean.returncode == 0, clean.stderr
    assert clean.stdout.strip() == "All checks passed!"
    assert clean.stderr == ""

    found = run_torchlint("check", "bad", "--no-cache", cwd=tmp_path)
    assert found.returncode == 1, found.stderr
    assert "TL101" in found.stdout
    assert found.stdout.rstrip().endswith("Found 1 error.")

    forced = run_torchlint("check", "bad", "--exit-zero", cwd=tmp_path)
    assert forced.returncode == 0
    assert "TL101" in forced.stdout


def test_usage_errors_exit_2_without_traceback(tmp_path: Path, run_torchlint: RunTorchlint) -> None:
    write(tmp_path / "train.py", MISSING_STEP)

    unknown = run_torchlint("check", "--select", "TL999", "train.py", cwd=tmp_path)
    assert unknown.returncode == 2
    assert "--select: `TL999` matches no rule" in unknown.stderr
    assert unknown.stdout == ""

    missing = run_torchlint("check", "nowhere.py", "train.py", "--exit-zero", cwd=tmp_path)
    assert missing.returncode == 2  # --exit-zero does not hide errors
    assert "nowhere.py: no such file or directory" in missing.stderr
    assert "TL101" in missing.stdout  # the other path was still checked

    bad_option = run_torchlint("check", "--output-format", "xml", cwd=tmp_path)
    assert bad_option.returncode == 2
    assert "invalid choice" in bad_option.stderr

    bad_env = run_torchlint("check", cwd=tmp_path, env={"TORCHLINT_OUTPUT_FORMAT": "xml"})
    assert bad_env.returncode == 2
    assert "TORCHLINT_OUTPUT_FORMAT" in bad_env.stderr

    no_command = run_torchlint(cwd=tmp_path)
    assert no_command.returncode == 2
    assert "usage:" in no_command.stderr

    for result in (unknown, missing, bad_option, bad_env, no_command):
        assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("pyproject", "expected"),
    [
        ("[tool.torchlint\nselect = []\n", r"pyproject\.toml: invalid TOML"),
        (
            "[tool.torchlint]\nselec = ['TL101']\n",
            r"pyproject\.toml: \[tool\.torchlint\] selec: unknown key; did you mean `select`\?",
        ),
        (
            "[tool.torchlint]\nselect = ['TL999']\n",
            r"error: .*pyproject\.toml: \[tool\.torchlint\] select: `TL999` matches no rule",
        ),
        (
            "[tool.torchlint]\nignore = 'TL101'\n",
            r"\[tool\.torchlint\] ignore: expected a list of strings",
        ),
        (
            "[tool.torchlint]\ntarget-torch-version = 2.3\n",
            r"\[tool\.torchlint\] target-torch-version: expected a version string",
        ),
    ],
)
def test_bad_configuration_exits_2_naming_file_and_key(
    tmp_path: Path, run_torchlint: RunTorchlint, pyproject: str, expected: str
) -> None:
    config = write(tmp_path / "pyproject.toml", pyproject)
    write(tmp_path / "pkg" / "train.py", CLEAN)
    result = run_torchlint("check", "pkg", cwd=tmp_path)
    assert result.returncode == 2
    assert re.search(expected, result.stderr), result.stderr
    assert str(config) in result.stderr
    assert "Traceback" not in result.stderr
    assert result.stdout == ""


def test_internal_error_is_one_line_unless_verbose(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The only way to make the real CLI crash on demand is to break one of its parts.
    def explode(*args: object, **kwargs: object) -> None:
        raise RuntimeError("boom\nsecond line")

    monkeypatch.setattr(workspace, "analyze_source", explode)
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "train.py", CLEAN)

    assert cli.main(["check", "train.py"]) == 2
    captured = capsys.readouterr()
    assert captured.err.strip().splitlines() == [
        "error: internal error: RuntimeError: boom (run with --verbose for the traceback)"
    ]

    assert cli.main(["check", "--verbose", "train.py"]) == 2
    assert "Traceback (most recent call last)" in capsys.readouterr().err


# --- output formats ------------------------------------------------------------------------


def test_json_output(tmp_path: Path, run_torchlint: RunTorchlint) -> None:
    write(tmp_path / "b.py", MISSING_STEP_AND_ITEM)
    write(tmp_path / "a.py", DEPRECATED_SCALER)
    write(tmp_path / "clean.py", CLEAN)

    result = run_torchlint("check", "--output-format", "json", ".", cwd=tmp_path)
    assert result.returncode == 1
    data = json.loads(result.stdout)  # nothing but JSON on stdout
    assert [(d["filename"], d["code"]) for d in data] == [
        (str(tmp_path / "a.py"), "TL204"),
        (str(tmp_path / "b.py"), "TL101"),
        (str(tmp_path / "b.py"), "TL301"),
    ]
    for item in data:
        assert set(item) == JSON_FIELDS
        assert os.path.isabs(item["filename"])
    tl101 = data[1]
    assert tl101["name"] == "missing-optimizer-step"
    assert tl101["severity"] == "error"
    assert tl101["location"] == {"row": 7, "column": 5}
    assert tl101["end_location"] == {"row": 7, "column": 20}
    assert tl101["fix"] is None
    assert tl101["url"].endswith("TL101-missing-optimizer-step.md")
    assert data[0]["fix"]["applicability"] == "safe"
    assert data[0]["fix"]["edits"]

    clean = run_torchlint(
        "check", "clean.py", cwd=tmp_path, env={"TORCHLINT_OUTPUT_FORMAT": "json"}
    )
    assert clean.returncode == 0
    assert json.loads(clean.stdout) == []


def test_concise_output(tmp_path: Path, run_torchlint: RunTorchlint) -> None:
    write(tmp_path / "pkg" / "train.py", MISSING_STEP_AND_ITEM)
    write(tmp_path / "pkg" / "amp.py", DEPRECATED_SCALER)
    result = run_torchlint("check", "--output-format", "concise", "pkg", cwd=tmp_path)
    assert result.returncode == 1
    matches = concise_lines(result.stdout)
    found = [(m["path"], int(m["row"]), int(m["col"]), m["code"]) for m in matches]
    amp_path, train_path = os.path.join("pkg", "amp.py"), os.path.join("pkg", "train.py")
    assert found == [
        (amp_path, 2, 10, "TL204"),
        (train_path, 7, 5, "TL101"),
        (train_path, 8, 11, "TL301"),
    ]
    assert "[*]" in matches[0].group(0)
    assert "[*]" not in matches[1].group(0)
    assert result.stdout.splitlines()[-1] == "Found 3 errors (1 fixable with --fix)."


def test_full_output_has_code_frame_and_summary(
    tmp_path: Path, run_torchlint: RunTorchlint
) -> None:
    write(tmp_path / "train.py", MISSING_STEP_AND_ITEM)
    result = run_torchlint("check", "train.py", cwd=tmp_path)
    assert result.returncode == 1
    out = result.stdout
    assert "\x1b[" not in out  # not a terminal: no colour
    lines = out.splitlines()
    header = lines.index(next(line for line in lines if line.startswith("train.py:7:5: TL101 ")))
    frame = lines[header + 1 : header + 8]
    assert frame == [
        "  |",
        "5 |     optimizer.zero_grad()",
        "6 |     loss = torch.nn.functional.mse_loss(model(x), y)",
        "7 |     loss.backward()",
        "  |     ^^^^^^^^^^^^^^^ TL101",
        "8 |     print(loss.item())",
        "  |",
    ]
    assert "8 |     print(loss.item())" in out
    assert "  |           ^^^^^^^^^^^ TL301" in out
    assert lines[-1] == "Found 2 errors."


def test_colour_only_when_forced_or_on_a_terminal(
    tmp_path: Path, run_torchlint: RunTorchlint
) -> None:
    write(tmp_path / "train.py", MISSING_STEP)
    colour = re.compile(r"\x1b\[(?:\d+;)*3[0-7]m")
    coloured = run_torchlint("check", "train.py", cwd=tmp_path, env={"FORCE_COLOR": "1"})
    assert colour.search(coloured.stdout)
    assert "^^^^^^^^^^^^^^^" in coloured.stdout  # the frame is there, in colour
    no_colour = run_torchlint(
        "check", "train.py", cwd=tmp_path, env={"FORCE_COLOR": "1", "NO_COLOR": "1"}
    )
    assert not colour.search(no_colour.stdout)


def test_paths_relative_to_cwd_when_below_it(tmp_path: Path, run_torchlint: RunTorchlint) -> None:
    project = tmp_path / "project"
    write(project / "src" / "train.py", MISSING_STEP)
    outside = write(tmp_path / "elsewhere" / "other.py", MISSING_STEP)
    result = run_torchlint(
        "check", "--output-format", "concise", str(project / "src"), str(outside), cwd=project
    )
    paths = [m["path"] for m in concise_lines(result.stdout)]
    assert paths == [str(outside), os.path.join("src", "train.py")]


# --- what is checked -----------------------------------------------------------------------


def test_syntax_error_among_good_files(tmp_path: Path, run_torchlint: RunTorchlint) -> None:
    write(tmp_path / "a_good.py", MISSING_STEP)
    write(tmp_path / "b_broken.py", "def f(:\n    pass\n")
    write(tmp_path / "c_good.py", DEPRECATED_SCALER)
    result = run_torchlint("check", "--output-format", "json", ".", cwd=tmp_path)
    assert result.returncode == 1
    found = [(Path(d["filename"]).name, d["code"]) for d in json.loads(result.stdout)]
    assert found == [("a_good.py", "TL101"), ("b_broken.py", "TL001"), ("c_good.py", "TL204")]


def test_odd_files_never_crash(tmp_path: Path, run_torchlint: RunTorchlint) -> None:
    (tmp_path / "latin.py").write_bytes(b'name = "caf\xe9"\n')  # not UTF-8, no cookie
    (tmp_path / "nul.py").write_bytes(b"x = 1\x00\n")
    (tmp_path / "empty.py").write_bytes(b"")
    result = run_torchlint("check", "--output-format", "json", ".", cwd=tmp_path)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    found = [(Path(d["filename"]).name, d["code"]) for d in json.loads(result.stdout)]
    assert found == [("latin.py", "TL001"), ("nul.py", "TL001")]

    empty = run_torchlint("check", "empty.py", cwd=tmp_path)
    assert (empty.returncode, empty.stdout.strip()) == (0, "All checks passed!")


def test_folder_without_python_files(tmp_path: Path, run_torchlint: RunTorchlint) -> None:
    write(tmp_path / "docs" / "notes.md", "# notes\n")
    result = run_torchlint("check", "docs", cwd=tmp_path)
    assert result.returncode == 0
    assert "No Python files found" in result.stderr
    assert result.stdout.strip() == "All checks passed!"


def test_walk_skips_hidden_and_default_folders_but_not_named_files(
    tmp_path: Path, run_torchlint: RunTorchlint
) -> None:
    write(tmp_path / "src" / "train.py", MISSING_STEP)
    write(tmp_path / "src" / "stub.pyi", MISSING_STEP)
    write(tmp_path / "src" / "notes.txt", MISSING_STEP)
    write(tmp_path / "script", MISSING_STEP)  # no suffix: checked only when named
    for skipped in (".hidden", ".venv", "venv", "build", "dist", "node_modules", "__pycache__"):
        write(tmp_path / skipped / "x.py", MISSING_STEP)
    write(tmp_path / "lib" / "site-packages" / "x.py", MISSING_STEP)

    walked = run_torchlint("check", "--output-format", "json", cwd=tmp_path)
    names = sorted(os.path.relpath(d["filename"], tmp_path) for d in json.loads(walked.stdout))
    assert names == [os.path.join("src", "stub.pyi"), os.path.join("src", "train.py")]

    named = run_torchlint("check", "--output-format", "json", "script", "build/x.py", cwd=tmp_path)
    names = sorted(Path(d["filename"]).name for d in json.loads(named.stdout))
    assert names == ["script", "x.py"]

    forced = run_torchlint("check", "--force-exclude", "build/x.py", "script", cwd=tmp_path)
    assert forced.returncode == 1
    assert "build" not in forced.stdout
    assert "script:7:5: TL101" in forced.stdout


def test_unreadable_entries_are_reported_and_the_rest_checked(
    tmp_path: Path, run_torchlint: RunTorchlint
) -> None:
    # Tests run as root, where `chmod 000` does not stop reading; these traps work for anyone:
    # a FIFO (reading it would block forever), a dangling link, and a link back to an
    # ancestor folder (walking it would never end).
    write(tmp_path / "pkg" / "train.py", MISSING_STEP)
    os.mkfifo(tmp_path / "pkg" / "pipe.py")
    (tmp_path / "pkg" / "gone.py").symlink_to(tmp_path / "pkg" / "missing.py")
    (tmp_path / "pkg" / "sub").mkdir()
    (tmp_path / "pkg" / "sub" / "loop").symlink_to(tmp_path / "pkg")
    result = run_torchlint("check", "--output-format", "concise", "pkg", cwd=tmp_path)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    errors = result.stderr.splitlines()
    assert any(
        line.startswith("error: ") and "pipe.py: not a regular file" in line for line in errors
    )
    assert any("gone.py: cannot read the file" in line for line in errors)
    assert any("loop: symbolic link loop" in line for line in errors)
    matches = concise_lines(result.stdout)
    assert [(m["path"], m["code"]) for m in matches] == [(os.path.join("pkg", "train.py"), "TL101")]


# --- configuration -------------------------------------------------------------------------


def test_config_select_ignore_exclude_per_file_ignores_and_cli_overrides(
    tmp_path: Path, run_torchlint: RunTorchlint
) -> None:
    write(
        tmp_path / "pyproject.toml",
        """\
[tool.torchlint]
select = ["TL1", "TL3"]
ignore = ["TL301"]
exclude = ["generated/", "/legacy.py"]
target-torch-version = "2.3"

[tool.torchlint.per-file-ignores]
"tests/**" = ["missing-optimizer-step"]
""",
    )
    for name in ("train.py", "legacy.py", "generated/gen.py", "tests/test_train.py"):
        write(tmp_path / name, MISSING_STEP_AND_ITEM)
    write(tmp_path / "amp.py", DEPRECATED_SCALER)  # TL204 is not selected
    write(tmp_path / "nested" / "legacy.py", MISSING_STEP)  # `/legacy.py` is anchored

    def found(*args: str) -> list[tuple[str, str]]:
        result = run_torchlint("check", "--output-format", "json", *args, cwd=tmp_path)
        assert result.returncode in (0, 1), result.stderr
        return [
            (Path(os.path.relpath(d["filename"], tmp_path)).as_posix(), d["code"])
            for d in json.loads(result.stdout)
        ]

    assert found() == [
        ("nested/legacy.py", "TL101"),
        ("train.py", "TL101"),
    ]
    # --select replaces the configuration's select, --ignore adds to its ignore.
    assert found("--select", "TL204,TL101", "--ignore", "TL1") == [("amp.py", "TL204")]
    assert found("--select", "TL3") == []  # the configuration still ignores TL301
    assert found("--ignore", "missing-optimizer-step") == []


def test_nearest_config_per_folder(tmp_path: Path, run_torchlint: RunTorchlint) -> None:
    write(tmp_path / "pyproject.toml", '[tool.torchlint]\nselect = ["TL101"]\n')
    write(tmp_path / "train.py", MISSING_STEP_AND_ITEM)
    write(tmp_path / "speed" / "pyproject.toml", '[tool.torchlint]\nselect = ["TL301"]\n')
    write(tmp_path / "speed" / "train.py", MISSING_STEP_AND_ITEM)
    # A pyproject.toml without the table is passed over: the root's settings apply.
    write(tmp_path / "plain" / "pyproject.toml", '[project]\nname = "plain"\n')
    write(tmp_path / "plain" / "train.py", MISSING_STEP_AND_ITEM)
    result = run_torchlint("check", "--output-format", "concise", cwd=tmp_path)
    found = [(Path(m["path"]).as_posix(), m["code"]) for m in concise_lines(result.stdout)]
    assert found == [
        ("plain/train.py", "TL101"),
        ("speed/train.py", "TL301"),
        ("train.py", "TL101"),
    ]

    explicit = run_torchlint(
        "check",
        "--output-format",
        "concise",
        "--config",
        str(tmp_path / "speed" / "pyproject.toml"),
        cwd=tmp_path,
    )
    codes = {m["code"] for m in concise_lines(explicit.stdout)}
    assert codes == {"TL301"}


# --- fixing --------------------------------------------------------------------------------


def test_fix_rewrites_and_is_idempotent(tmp_path: Path, run_torchlint: RunTorchlint) -> None:
    target = write(tmp_path / "amp.py", DEPRECATED_SCALER)
    target.chmod(0o640)
    other = write(tmp_path / "train.py", MISSING_STEP)

    first = run_torchlint("check", "--fix", "--output-format", "concise", ".", cwd=tmp_path)
    assert first.returncode == 1  # TL101 in train.py remains
    assert target.read_text(encoding="utf-8") == FIXED_SCALER
    assert isinstance(parse_source(target.read_text(encoding="utf-8")), ParsedSource)
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert other.read_text(encoding="utf-8") == MISSING_STEP
    assert "Fixed 1 error." in first.stdout
    assert [m["code"] for m in concise_lines(first.stdout.replace("Fixed 1 error.\n", ""))] == [
        "TL101"
    ]
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]

    before = target.stat().st_mtime_ns
    second = run_torchlint("check", "--fix", "amp.py", cwd=tmp_path)
    assert second.returncode == 0
    assert "Fixed" not in second.stdout
    assert second.stdout.strip() == "All checks passed!"
    assert target.read_text(encoding="utf-8") == FIXED_SCALER
    assert target.stat().st_mtime_ns == before  # not rewritten


def test_fix_keeps_line_endings_encoding_and_bom(
    tmp_path: Path, run_torchlint: RunTorchlint
) -> None:
    crlf = tmp_path / "crlf.py"
    crlf.write_bytes(
        b"from torch.cuda.amp import GradScaler\r\nscaler = GradScaler()\r\nx = 1  \r\n"
    )
    latin = tmp_path / "latin.py"
    latin.write_bytes(
        b"# -*- coding: latin-1 -*-\n"
        b"from torch.cuda.amp import GradScaler\n"
        b'greeting = "caf\xe9"\n'
        b"scaler = GradScaler(init_scale=2.0)\n"
    )
    bom = tmp_path / "bom.py"
    bom.write_bytes(b"\xef\xbb\xbfimport torch\r\nscaler = torch.cuda.amp.GradScaler()\r\n")
    result = run_torchlint("check", "--fix", ".", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Fixed 3 errors." in result.stdout
    assert crlf.read_bytes() == (
        b'import torch\r\nscaler = torch.amp.GradScaler("cuda")\r\nx = 1  \r\n'
    )
    assert latin.read_bytes() == (
        b"# -*- coding: latin-1 -*-\n"
        b"import torch\n"
        b'greeting = "caf\xe9"\n'
        b'scaler = torch.amp.GradScaler("cuda", init_scale=2.0)\n'
    )
    assert bom.read_bytes() == (
        b'\xef\xbb\xbfimport torch\r\nscaler = torch.amp.GradScaler("cuda")\r\n'
    )


def test_diff_writes_nothing(tmp_path: Path, run_torchlint: RunTorchlint) -> None:
    target = write(tmp_path / "amp.py", DEPRECATED_SCALER)
    write(tmp_path / "train.py", MISSING_STEP)  # nothing to fix there
    result = run_torchlint("check", "--diff", ".", cwd=tmp_path)
    assert result.returncode == 1
    assert target.read_text(encoding="utf-8") == DEPRECATED_SCALER
    assert result.stdout.splitlines() == [
        "--- a/amp.py",
        "+++ b/amp.py",
        "@@ -1,2 +1,2 @@",
        "-from torch.cuda.amp import GradScaler",
        "-scaler = GradScaler()",
        "+import torch",
        '+scaler = torch.amp.GradScaler("cuda")',
    ]
    assert "Would fix 1 error." in result.stderr

    nothing = run_torchlint("check", "--diff", "train.py", cwd=tmp_path)
    assert (nothing.returncode, nothing.stdout) == (0, "")


def test_fix_with_json_keeps_stdout_pure(tmp_path: Path, run_torchlint: RunTorchlint) -> None:
    write(tmp_path / "amp.py", DEPRECATED_SCALER + MISSING_STEP)
    result = run_torchlint("check", "--fix", "--output-format", "json", "amp.py", cwd=tmp_path)
    assert result.returncode == 1
    assert [d["code"] for d in json.loads(result.stdout)] == ["TL101"]
    assert "Fixed 1 error." in result.stderr


# --- rules ---------------------------------------------------------------------------------


def test_rules_listing(tmp_path: Path, run_torchlint: RunTorchlint) -> None:
    result = run_torchlint("rules", "--output-format", "json", cwd=tmp_path)
    assert result.returncode == 0
    rules = {item["code"]: item for item in json.loads(result.stdout)}
    assert rules["TL101"] == {
        "code": "TL101",
        "name": "missing-optimizer-step",
        "family": "loop",
        "severity": "error",
        "default_enabled": True,
        "fixable": False,
        "summary": rules["TL101"]["summary"],
    }
    assert rules["TL101"]["summary"]
    assert rules["TL204"]["fixable"] is True

    text = run_torchlint("rules", cwd=tmp_path)
    assert text.returncode == 0
    assert re.search(r"TL101\s+missing-optimizer-step\s+loop", text.stdout)


def test_rule_doc(tmp_path: Path, run_torchlint: RunTorchlint) -> None:
    by_code = run_torchlint("rule", "TL101", cwd=tmp_path)
    assert by_code.returncode == 0, by_code.stderr
    title = by_code.stdout.splitlines()[0]
    assert title.startswith("# ")
    assert "TL101" in title and "missing-optimizer-step" in title
    assert "## What it does" in by_code.stdout

    by_name = run_torchlint(
        "rule", "missing-optimizer-step", "--output-format", "json", cwd=tmp_path
    )
    assert by_name.returncode == 0
    payload = json.loads(by_name.stdout)
    assert (payload["code"], payload["name"]) == ("TL101", "missing-optimizer-step")
    assert payload["doc"] == by_code.stdout.rstrip("\n") or payload["doc"] == by_code.stdout

    unknown = run_torchlint("rule", "TL999", cwd=tmp_path)
    assert unknown.returncode == 2
    assert "unknown rule `TL999`" in unknown.stderr


def test_version(tmp_path: Path, run_torchlint: RunTorchlint) -> None:
    result = run_torchlint("--version", cwd=tmp_path)
    assert result.returncode == 0
    assert result.stdout.strip() == f"torchlint {__version__}"
