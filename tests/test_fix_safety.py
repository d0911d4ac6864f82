"""`--fix` never damages a file. For every program the project ships (examples/, the python
blocks of the rule docs in rules/, and the rule cases under tests/cases/), applying every fix,
safe and unsafe, gives text that parses, that a second run leaves alone, and that differs from
the input only on the lines the fixes' edits cover. And on disk: a file changed since it was
read is not rewritten, and a rewrite replaces the file whole (temporary file and rename),
keeping its line endings, encoding and permission bits.

(Encoding, BOM, CRLF and permission bits through `--fix` are also in test_cli.py, and
`write_atomic` on its own in test_fixer.py; the cases here are the ones those leave out.)"""

from __future__ import annotations

import ast
import difflib
import os
import stat
import warnings
from pathlib import Path

import pytest
from conftest import Run, RunTorchlint
from snippets import DEPRECATED_SCALER, FIXED_SCALER

from torchlint import workspace
from torchlint.analysis.source import ParseFailure, parse_source
from torchlint.diagnostics import Edit
from torchlint.docs import CHECKOUT_DOCS, CHECKOUT_ROOT, doc_examples
from torchlint.engine import analyze_source
from torchlint.fixer import (
    MAX_PASSES,
    apply_edits,
    dominant_newline,
    fix_applies,
    fix_text,
    select_fixes,
)
from torchlint.selection import RuleSelection

ALL = RuleSelection(select=("ALL",))


def _sources() -> list[tuple[str, str]]:
    """(id, text) of every program the sweep fixes."""
    found: list[tuple[str, str]] = []
    for path in sorted((CHECKOUT_ROOT / "examples").glob("*.py")):
        found.append((f"examples/{path.name}", path.read_text(encoding="utf-8")))
    for path in sorted(CHECKOUT_DOCS.glob("TL*.md")):
        for section, blocks in doc_examples(path.read_text(encoding="utf-8")).items():
            for number, block in enumerate(blocks, start=1):
                name = f"rules/{path.stem}/{section.replace(' ', '-')}-{number}"
                found.append((name, block))
    cases = Path(__file__).parent / "cases"
    for path in sorted(cases.glob("**/*.py")):
        found.append((f"cases/{path.relative_to(cases)}", path.read_text(encoding="utf-8")))
    return found


SOURCES = _sources()


def _python_parses(text: str) -> bool:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            ast.parse(text)
        except SyntaxError:
            return False
    return True


def _parses(text: str) -> bool:
    return not isinstance(parse_source(text), ParseFailure)


def _touched_rows(edits: list[Edit]) -> set[int]:
    rows: set[int] = set()
    for edit in edits:
        rows.update(range(edit.location.row, edit.end_location.row + 1))
    return rows


def _assert_local(old: str, new: str, edits: list[Edit]) -> None:
    """Every line that differs between `old` and `new` is one the edits cover (an insertion
    between two lines counts when either neighbour is covered)."""
    allowed = _touched_rows(edits)
    old_lines = old.splitlines(keepends=True)
    new_lines = new.splitlines(keepends=True)
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        if i1 == i2:  # a pure insertion before old row i1 + 1
            assert {i1, i1 + 1} & allowed, (
                f"lines inserted after row {i1}, outside the fixed rows {sorted(allowed)}:\n"
                + "".join(new_lines[j1:j2])
            )
        else:
            outside = sorted(set(range(i1 + 1, i2 + 1)) - allowed)
            assert not outside, (
                f"rows {outside} changed, outside the fixed rows {sorted(allowed)}:\n"
                + "".join(old_lines[i1:i2])
                + "became\n"
                + "".join(new_lines[j1:j2])
            )


def test_the_sweep_covers_every_kind_of_source() -> None:
    names = [name for name, _ in SOURCES]
    assert sum(n.startswith("examples/") for n in names) >= 5
    assert sum(n.startswith("rules/") for n in names) >= 50
    assert sum(n.startswith("cases/") for n in names) >= 100


@pytest.mark.parametrize(("name", "text"), SOURCES, ids=[name for name, _ in SOURCES])
def test_all_fixes_parse_are_idempotent_and_local(name: str, text: str) -> None:
    if not _parses(text):  # the TL001 doc's examples: nothing may change
        assert name.startswith("rules/TL001"), f"{name} does not parse"
        assert fix_text(text, name, ALL, unsafe=True).text == text
        return
    # This Python's own parser too, where it knows the syntax (the docs show 3.12's).
    python_parses = _python_parses(text)
    newline = dominant_newline(text)
    # The passes `fix_text` makes, one by one, so each pass's edits can be checked against the
    # lines they changed.
    current = text
    for _ in range(MAX_PASSES):
        diagnostics = analyze_source(current, name, ALL).diagnostics
        chosen = select_fixes(current, diagnostics, unsafe=True)
        if not chosen:
            break
        edits = [edit for d in chosen if d.fix is not None for edit in d.fix.edits]
        updated = apply_edits(current, edits, newline)
        _assert_local(current, updated, edits)
        assert _parses(updated), f"{[d.code for d in chosen]} broke the file:\n{updated}"
        current = updated
    else:
        pytest.fail(f"fixes still pending after {MAX_PASSES} passes")

    result = fix_text(text, name, ALL, unsafe=True)
    assert result.rejected == []
    assert result.errors == []
    assert result.text == current
    assert _parses(result.text)
    if python_parses:
        assert _python_parses(result.text)
    again = fix_text(result.text, name, ALL, unsafe=True)
    assert again.text == result.text, "a second --fix changed the text again"
    assert again.fixed_count == 0
    assert not [d for d in again.remaining_diagnostics if fix_applies(d, unsafe=True)]


def test_the_sweep_applies_fixes_somewhere() -> None:
    fixed = [name for name, text in SOURCES if fix_text(text, name, ALL, unsafe=True).fixed_count]
    assert len(fixed) >= 10, fixed


# --- on disk -------------------------------------------------------------------------------


def test_a_file_changed_since_it_was_read_is_not_fixed(
    tmp_path: Path, run: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "amp.py"
    target.write_text(DEPRECATED_SCALER, encoding="utf-8")
    edited = DEPRECATED_SCALER + "# saved in the editor meanwhile\n"
    real_fix_text = workspace.fix_text

    def fix_while_someone_saves(*args: object, **kwargs: object) -> object:
        target.write_text(edited, encoding="utf-8")  # after the read, before the write
        return real_fix_text(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(workspace, "fix_text", fix_while_someone_saves)
    result = run("check", "--fix", "--no-cache", "amp.py", cwd=tmp_path)
    assert result.code == 2
    assert "amp.py: not fixed: the file changed on disk since it was read" in result.err
    assert "Traceback" not in result.err
    assert target.read_text(encoding="utf-8") == edited  # the newer content survives
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]

    monkeypatch.setattr(workspace, "fix_text", real_fix_text)
    retry = run("check", "--fix", "--no-cache", "amp.py", cwd=tmp_path)
    assert retry.code == 0, retry.err
    assert target.read_text(encoding="utf-8") == FIXED_SCALER + "# saved in the editor meanwhile\n"


def test_a_file_deleted_since_it_was_read_is_not_recreated(
    tmp_path: Path, run: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "amp.py"
    target.write_text(DEPRECATED_SCALER, encoding="utf-8")
    real_fix_text = workspace.fix_text

    def fix_while_someone_deletes(*args: object, **kwargs: object) -> object:
        target.unlink()
        return real_fix_text(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(workspace, "fix_text", fix_while_someone_deletes)
    result = run("check", "--fix", "--no-cache", "amp.py", cwd=tmp_path)
    assert result.code == 2
    assert "amp.py: not fixed: cannot read the file" in result.err
    assert not target.exists()
    assert list(tmp_path.iterdir()) == []


def test_fix_replaces_the_file_by_rename(tmp_path: Path, run_torchlint: RunTorchlint) -> None:
    """The rewrite is a new file renamed over the old one: a reader never sees half a file,
    and another name for the old inode (a hard link) keeps the old text."""
    target = tmp_path / "amp.py"
    target.write_text(DEPRECATED_SCALER, encoding="utf-8")
    target.chmod(0o751)
    backup = tmp_path / "amp.py.orig"
    os.link(target, backup)
    inode = target.stat().st_ino
    result = run_torchlint("check", "--fix", "--no-cache", "amp.py", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert target.read_text(encoding="utf-8") == FIXED_SCALER
    assert target.stat().st_ino != inode
    assert stat.S_IMODE(target.stat().st_mode) == 0o751
    assert backup.read_text(encoding="utf-8") == DEPRECATED_SCALER
    assert sorted(p.name for p in tmp_path.iterdir()) == ["amp.py", "amp.py.orig"]


@pytest.mark.parametrize(
    ("before", "after"),
    [
        pytest.param(
            b"from torch.cuda.amp import GradScaler\rscaler = GradScaler()\rx = 1\r",
            b'import torch\rscaler = torch.amp.GradScaler("cuda")\rx = 1\r',
            id="cr-only",
        ),
        pytest.param(
            # Mixed endings: the lines no fix touches keep theirs; new lines take the
            # dominant one (CRLF here).
            b"from torch.cuda.amp import GradScaler\r\nscaler = GradScaler()\r\n"
            b"a = 1\n\r\nb = 2\r\n",
            b'import torch\r\nscaler = torch.amp.GradScaler("cuda")\r\na = 1\n\r\nb = 2\r\n',
            id="mixed",
        ),
        pytest.param(
            b"# -*- coding: cp1252 -*-\n"
            b"from torch.cuda.amp import GradScaler\n"
            b'price = "\x80 5"\n'
            b"scaler = GradScaler()",
            b"# -*- coding: cp1252 -*-\n"
            b"import torch\n"
            b'price = "\x80 5"\n'
            b'scaler = torch.amp.GradScaler("cuda")',
            id="cp1252-no-final-newline",
        ),
    ],
)
def test_fix_keeps_endings_and_encoding(
    tmp_path: Path, run_torchlint: RunTorchlint, before: bytes, after: bytes
) -> None:
    target = tmp_path / "amp.py"
    target.write_bytes(before)
    result = run_torchlint("check", "--fix", "--no-cache", "amp.py", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert target.read_bytes() == after
