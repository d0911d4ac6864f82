"""Inputs people really feed the CLI: each gets a clear message and a sensible exit status, and
nothing hangs (every run is a subprocess with a timeout; see `run_torchlint`).

Exit statuses: 0 nothing found, 1 findings (a file that is not Python is a TL001 finding), 2 a
file that could not be checked at all. The inputs are chosen to behave the same when the tests
run as root (where `chmod 000` does not stop a read): FIFOs, folders and dangling links named
like Python files, paths through a file. Walks over FIFOs, dangling links and link loops are
in test_cli.py; empty and NUL-byte files there too."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import RunTorchlint
from snippets import MISSING_STEP


def _codes(stdout: str) -> list[tuple[str, str, int]]:
    return [(Path(d["filename"]).name, d["code"], d["location"]["row"]) for d in json.loads(stdout)]


# --- encodings -----------------------------------------------------------------------------


def test_non_utf8_files_with_a_coding_cookie_are_checked(
    tmp_path: Path, run_torchlint: RunTorchlint
) -> None:
    def body(label: str) -> str:
        return MISSING_STEP.replace("import torch\n", f"import torch\nlabel = '{label}'\n")

    (tmp_path / "latin.py").write_bytes(
        b"# -*- coding: latin-1 -*-\n" + body("caf\u00e9").encode("latin-1")
    )
    (tmp_path / "cp1252.py").write_bytes(
        b"# vim: set fileencoding=cp1252 :\n" + body("\u20ac 5").encode("cp1252")
    )
    (tmp_path / "sjis.py").write_bytes(
        b"# coding: shift_jis\n" + body("\u65e5\u672c").encode("shift_jis")
    )
    result = run_torchlint("check", "--output-format", "json", "--no-cache", ".", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert result.stderr == ""
    codes = {name: (code, row) for name, code, row in _codes(result.stdout)}
    expected_row = 7 + 2  # TL101 is on line 7 of MISSING_STEP; then the cookie and the label
    assert codes == {
        "cp1252.py": ("TL101", expected_row),
        "latin.py": ("TL101", expected_row),
        "sjis.py": ("TL101", expected_row),
    }


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"# coding: no-such-codec\nname = 'caf\xe9'\n", "no-such-codec"),
        (b"# coding: utf-8\nname = 'caf\xe9'\n", "utf-8"),  # the cookie lies
        (b"x = 1\n\n# coding: latin-1\nname = '\xe9'\n", "utf-8"),  # cookie too late to count
    ],
    ids=["unknown-codec", "wrong-cookie", "late-cookie"],
)
def test_undecodable_files_are_one_tl001(
    tmp_path: Path, run_torchlint: RunTorchlint, data: bytes, message: str
) -> None:
    (tmp_path / "bad.py").write_bytes(data)
    result = run_torchlint("check", "--output-format", "json", "--no-cache", "bad.py", cwd=tmp_path)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    found = json.loads(result.stdout)
    assert [d["code"] for d in found] == ["TL001"]
    assert message in found[0]["message"]


def test_a_codec_registered_at_run_time_over_utf8_bytes_is_read_as_utf8(
    tmp_path: Path, run_torchlint: RunTorchlint
) -> None:
    """`# -*- coding: future_fstrings -*-` names a codec that a package registers when it is
    installed; the bytes are UTF-8, so the file is checked as such (not one TL001)."""
    (tmp_path / "compat.py").write_bytes(
        b"# -*- coding: future_fstrings -*-\n" + MISSING_STEP.encode("utf-8")
    )
    result = run_torchlint(
        "check", "--output-format", "json", "--no-cache", "compat.py", cwd=tmp_path
    )
    found = json.loads(result.stdout)
    assert [d["code"] for d in found] == ["TL101"]


# --- not Python ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "data",
    [
        b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 4,
        b"# Notes\n\n- one\n- two: `x`\n",
        b"#!/bin/sh\nset -e\nif [ -f x ]; then echo hi; fi\n",
        b"\xff\xfex\x00=\x001\x00\n\x00",  # UTF-16 with a BOM
    ],
    ids=["png", "markdown", "shell", "utf-16"],
)
def test_files_that_are_not_python(
    tmp_path: Path, run_torchlint: RunTorchlint, data: bytes
) -> None:
    (tmp_path / "thing.py").write_bytes(data)
    result = run_torchlint("check", "--output-format", "concise", "thing.py", cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stdout.splitlines()
    assert len([line for line in lines if ": TL001 " in line]) == 1, result.stdout
    assert not [line for line in lines if ": TL" in line and ": TL001 " not in line]


def test_a_named_file_without_a_python_suffix_is_checked(
    tmp_path: Path, run_torchlint: RunTorchlint
) -> None:
    (tmp_path / "README").write_text("Just prose, not code.\n", encoding="utf-8")
    result = run_torchlint("check", "--output-format", "json", "README", cwd=tmp_path)
    assert result.returncode == 1
    assert [code for _, code, _ in _codes(result.stdout)] == ["TL001"]


# --- things that cannot be read ------------------------------------------------------------


def test_named_paths_that_cannot_be_read(tmp_path: Path, run_torchlint: RunTorchlint) -> None:
    (tmp_path / "good.py").write_text(MISSING_STEP, encoding="utf-8")
    os.mkfifo(tmp_path / "pipe.py")
    (tmp_path / "dangling.py").symlink_to(tmp_path / "missing.py")
    (tmp_path / "loop.py").symlink_to(tmp_path / "loop.py")
    (tmp_path / "plain.txt").write_text("x\n", encoding="utf-8")
    names = ["pipe.py", "dangling.py", "loop.py", "plain.txt/inside.py", "absent.py", "good.py"]
    result = run_torchlint("check", "--output-format", "concise", *names, cwd=tmp_path)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert any("pipe.py: not a regular file" in line for line in errors), errors
    assert any("dangling.py" in line for line in errors), errors
    assert any("loop.py: symbolic link loop" in line for line in errors), errors
    assert any("plain.txt/inside.py" in line for line in errors), errors
    assert any("absent.py: no such file or directory" in line for line in errors), errors
    assert len(errors) == 5, errors
    assert "good.py:" in result.stdout and "TL101" in result.stdout  # the rest is still checked


def test_a_folder_named_like_a_python_file_is_walked(
    tmp_path: Path, run_torchlint: RunTorchlint
) -> None:
    (tmp_path / "pkg.py").mkdir()
    (tmp_path / "pkg.py" / "train.py").write_text(MISSING_STEP, encoding="utf-8")
    result = run_torchlint("check", "--output-format", "json", "pkg.py", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert [(name, code) for name, code, _ in _codes(result.stdout)] == [("train.py", "TL101")]


@pytest.mark.parametrize(
    "data",
    [b"", b"\xef\xbb\xbf", b"\n\n\n", b"\r\n\r\n", b"# only a comment", b"   \t\f\n"],
    ids=["empty", "bom", "newlines", "crlf", "comment", "whitespace"],
)
def test_empty_files_pass(tmp_path: Path, run_torchlint: RunTorchlint, data: bytes) -> None:
    (tmp_path / "empty.py").write_bytes(data)
    result = run_torchlint("check", "empty.py", cwd=tmp_path)
    assert (result.returncode, result.stdout.strip(), result.stderr) == (
        0,
        "All checks passed!",
        "",
    )


# --- size ----------------------------------------------------------------------------------


def test_a_folder_with_ten_thousand_files(tmp_path: Path, run_torchlint: RunTorchlint) -> None:
    root = tmp_path / "many"
    for folder in range(100):
        sub = root / f"d{folder:03}"
        sub.mkdir(parents=True)
        for number in range(100):
            (sub / f"m{number:03}.py").write_text(f"x = {number}\n", encoding="utf-8")
    (root / "d050" / "train.py").write_text(MISSING_STEP, encoding="utf-8")
    result = run_torchlint("check", "--output-format", "json", "--no-cache", "many", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert [(name, code) for name, code, _ in _codes(result.stdout)] == [("train.py", "TL101")]


def test_a_fifty_thousand_line_file(tmp_path: Path, run_torchlint: RunTorchlint) -> None:
    filler = "".join(f"value_{n} = {n} * 2  # line {n}\n" for n in range(50_000))
    (tmp_path / "big.py").write_text(filler + MISSING_STEP, encoding="utf-8")
    result = run_torchlint("check", "--output-format", "json", "--no-cache", "big.py", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    expected_row = 50_000 + 7  # TL101 is on line 7 of MISSING_STEP
    assert _codes(result.stdout) == [("big.py", "TL101", expected_row)]


def test_a_bom_with_another_declared_encoding_is_refused(
    run_torchlint: RunTorchlint, tmp_path: Path
) -> None:
    """Python refuses a UTF-8 BOM followed by a latin-1 cookie; so does torchlint."""
    path = tmp_path / "bom.py"
    path.write_bytes(b"\xef\xbb\xbf# coding: latin-1\nx = 1\n")
    done = run_torchlint("check", str(path), cwd=tmp_path)
    assert done.returncode == 1
    assert "TL001" in done.stdout and "BOM" in done.stdout
