"""The results cache: `.torchlint_cache/` in the project root, keyed on the file's bytes, the
torchlint build and the effective settings; `--no-cache`; `torchlint clean`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from snippets import DEPRECATED_SCALER, FIXED_SCALER, MISSING_STEP, SELECT

if TYPE_CHECKING:
    from conftest import Output, Run

from torchlint import workspace
from torchlint.cache import (
    CACHE_DIR_NAME,
    Cache,
    content_hash,
    decode_diagnostic,
    encode_diagnostic,
    settings_key,
)
from torchlint.diagnostics import Diagnostic, Edit, Fix, Location, Severity
from torchlint.engine import Analysis
from torchlint.selection import RuleSelection


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def cache_files(root: Path) -> list[Path]:
    return sorted((root / CACHE_DIR_NAME).glob("*/*.json"))


def only_cache_file(root: Path) -> Path:
    files = cache_files(root)
    assert len(files) == 1, files
    return files[0]


def from_cache(result: Output) -> int:
    """How many files the run took from the cache (from its --verbose line)."""
    for line in result.err.splitlines():
        if line.startswith("debug: checked") and "from the cache" in line:
            return int(line.split("(")[1].split()[0])
    raise AssertionError(f"no cache line in:\n{result.err}")


def load(path: Path) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return document


# --- hits and misses -----------------------------------------------------------------------


def test_second_run_comes_from_the_cache(tmp_path: Path, run: Run) -> None:
    write(tmp_path / "train.py", MISSING_STEP)
    write(tmp_path / "amp.py", DEPRECATED_SCALER)
    first = run("check", "-v", *SELECT, "--output-format", "full", cwd=tmp_path)
    assert first.code == 1
    assert from_cache(first) == 0
    second = run("check", "-v", *SELECT, "--output-format", "full", cwd=tmp_path)
    assert from_cache(second) == 2
    # The same output, code frames included (the text is read again for them).
    assert second.out == first.out
    assert "loss.backward()" in second.out and "^^^" in second.out
    assert second.code == 1

    folder = tmp_path / CACHE_DIR_NAME
    assert (folder / ".gitignore").read_text(encoding="utf-8").splitlines()[-1] == "*"
    assert (
        (folder / "CACHEDIR.TAG")
        .read_text(encoding="utf-8")
        .startswith("Signature: 8a477f597d28d172789f06886806bc55")
    )
    document = load(only_cache_file(tmp_path))
    assert set(document["files"]) == {"amp.py", "train.py"}
    entry = document["files"]["train.py"]
    assert entry["hash"] == content_hash((tmp_path / "train.py").read_bytes())
    assert [d["code"] for d in entry["diagnostics"]] == ["TL101"]


def test_results_really_come_from_the_cache_until_the_file_changes(
    tmp_path: Path, run: Run
) -> None:
    target = write(tmp_path / "train.py", MISSING_STEP)
    run("check", *SELECT, cwd=tmp_path)
    path = only_cache_file(tmp_path)
    document = load(path)
    document["files"]["train.py"]["diagnostics"][0]["message"] = "FROM THE CACHE"
    path.write_text(json.dumps(document), encoding="utf-8")

    cached = run("check", *SELECT, "--output-format", "concise", cwd=tmp_path)
    assert "FROM THE CACHE" in cached.out

    uncached = run("check", *SELECT, "--output-format", "concise", "--no-cache", cwd=tmp_path)
    assert "FROM THE CACHE" not in uncached.out
    assert "TL101" in uncached.out

    target.write_text(MISSING_STEP + "# edited\n", encoding="utf-8")  # new bytes: a miss
    changed = run("check", *SELECT, "--output-format", "concise", cwd=tmp_path)
    assert "FROM THE CACHE" not in changed.out
    assert "TL101" in changed.out
    assert load(path)["files"]["train.py"]["hash"] == content_hash(target.read_bytes())


def test_no_cache_neither_reads_nor_writes(tmp_path: Path, run: Run) -> None:
    write(tmp_path / "train.py", MISSING_STEP)
    result = run("check", *SELECT, "--no-cache", cwd=tmp_path)
    assert result.code == 1
    assert not (tmp_path / CACHE_DIR_NAME).exists()


def test_settings_are_part_of_the_key(tmp_path: Path, run: Run) -> None:
    write(tmp_path / "train.py", MISSING_STEP + "    print(loss.item())\n")
    both = run("check", "--select", "TL101,TL301", "--output-format", "json", cwd=tmp_path)
    one = run("check", "--select", "TL301", "--output-format", "json", cwd=tmp_path)
    assert [d["code"] for d in json.loads(both.out)] == ["TL101", "TL301"]
    assert [d["code"] for d in json.loads(one.out)] == ["TL301"]
    assert len(cache_files(tmp_path)) == 2
    # Per-file ignores change a file's settings too.
    write(
        tmp_path / "pyproject.toml",
        '[tool.torchlint]\nselect = ["TL101", "TL301"]\n\n'
        '[tool.torchlint.per-file-ignores]\n"train.py" = ["TL101"]\n',
    )
    ignored = run("check", "--output-format", "json", cwd=tmp_path)
    assert [d["code"] for d in json.loads(ignored.out)] == ["TL301"]


def test_cache_lives_in_the_folder_of_the_configuration(tmp_path: Path, run: Run) -> None:
    root = tmp_path / "project"
    write(root / "pyproject.toml", '[tool.torchlint]\nselect = ["TL101"]\n')
    write(root / "src" / "pkg" / "train.py", MISSING_STEP)
    result = run("check", ".", cwd=root / "src")
    assert result.code == 1
    assert (root / CACHE_DIR_NAME).is_dir()
    assert not (root / "src" / CACHE_DIR_NAME).exists()
    assert set(load(only_cache_file(root))["files"]) == {"src/pkg/train.py"}

    # Without a configuration: the current directory.
    plain = tmp_path / "plain"
    write(plain / "sub" / "train.py", MISSING_STEP)
    run("check", *SELECT, "sub", cwd=plain)
    assert set(load(only_cache_file(plain))["files"]) == {"sub/train.py"}


# --- damage --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "damage",
    [
        b"\x00\xff not json at all",
        b'{"format": 1, "build": "x", "settings": "y", "files": []}',
        b"[1, 2, 3]",
        b"",
    ],
)
def test_a_corrupt_cache_file_is_ignored_and_rewritten(
    tmp_path: Path, run: Run, damage: bytes
) -> None:
    write(tmp_path / "train.py", MISSING_STEP)
    first = run("check", *SELECT, "--output-format", "json", cwd=tmp_path)
    path = only_cache_file(tmp_path)
    path.write_bytes(damage)
    second = run("check", "-v", *SELECT, "--output-format", "json", cwd=tmp_path)
    assert (second.code, second.out) == (first.code, first.out)
    assert from_cache(second) == 0
    assert "Traceback" not in second.err
    assert set(load(path)["files"]) == {"train.py"}  # valid again


def test_a_malformed_entry_is_a_miss(tmp_path: Path, run: Run) -> None:
    write(tmp_path / "train.py", MISSING_STEP)
    write(tmp_path / "amp.py", DEPRECATED_SCALER)
    first = run("check", *SELECT, "--output-format", "json", cwd=tmp_path)
    path = only_cache_file(tmp_path)
    document = load(path)
    document["files"]["train.py"]["diagnostics"] = [{"code": 3}]
    path.write_text(json.dumps(document), encoding="utf-8")
    second = run("check", "-v", *SELECT, "--output-format", "json", cwd=tmp_path)
    assert second.out == first.out
    assert from_cache(second) == 1  # amp.py
    assert load(path)["files"]["train.py"]["diagnostics"][0]["code"] == "TL101"


def test_an_unwritable_cache_is_skipped(tmp_path: Path, run: Run) -> None:
    write(tmp_path / "train.py", MISSING_STEP)
    (tmp_path / CACHE_DIR_NAME).write_text("a file where the folder should be", encoding="utf-8")
    result = run("check", *SELECT, "--output-format", "concise", cwd=tmp_path)
    assert result.code == 1
    assert "TL101" in result.out
    assert result.err == ""


def test_internal_errors_are_not_cached(
    tmp_path: Path, run: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path / "train.py", MISSING_STEP)

    def broken(text: str, filename: str, selection: RuleSelection, **options: object) -> Analysis:
        return Analysis(filename, text, errors=[f"{filename}: rule TL101 failed: boom"])

    monkeypatch.setattr(workspace, "analyze_source", broken)
    result = run("check", *SELECT, cwd=tmp_path)
    assert result.code == 2
    assert "rule TL101 failed: boom" in result.err
    assert all(not load(path)["files"] for path in cache_files(tmp_path))


# --- fixing --------------------------------------------------------------------------------


def test_fix_never_trusts_cached_results(tmp_path: Path, run: Run) -> None:
    target = write(tmp_path / "amp.py", DEPRECATED_SCALER)
    run("check", "--select", "TL204", cwd=tmp_path)
    path = only_cache_file(tmp_path)
    document = load(path)
    (cached,) = document["files"]["amp.py"]["diagnostics"]
    for edit in cached["fix"]["edits"]:
        edit[0] = "POISONED"
    path.write_text(json.dumps(document), encoding="utf-8")

    diff = run("check", "--select", "TL204", "--diff", cwd=tmp_path)
    assert diff.code == 1
    assert "POISONED" not in diff.out
    assert '+scaler = torch.amp.GradScaler("cuda")' in diff.out

    fixed = run("check", "-v", "--select", "TL204", "--fix", cwd=tmp_path)
    assert fixed.code == 0
    assert target.read_text(encoding="utf-8") == FIXED_SCALER
    # The fixed file's results were stored under its new content: the next run is all cached.
    entry = load(path)["files"]["amp.py"]
    assert entry == {"hash": content_hash(FIXED_SCALER.encode()), "diagnostics": []}
    again = run("check", "-v", "--select", "TL204", cwd=tmp_path)
    assert (again.code, from_cache(again)) == (0, 1)


# --- the pieces ----------------------------------------------------------------------------


def test_diagnostics_survive_the_round_trip() -> None:
    diagnostic = Diagnostic(
        code="TL204",
        name="deprecated-cuda-amp",
        message="a message with `code` and ünïcode",
        severity=Severity.WARNING,
        filename="/somewhere/train.py",
        location=Location(3, 4),
        end_location=Location(3, 20),
        fix=Fix("safe", "Replace", (Edit("x\ny", Location(3, 4), Location(3, 20)),)),
        related=(("defined here", Location(1, 1)),),
    )
    encoded = json.loads(json.dumps(encode_diagnostic(diagnostic)))
    assert "filename" not in encoded
    assert decode_diagnostic(encoded, "/somewhere/train.py") == diagnostic
    for broken in ({**encoded, "severity": "fatal"}, {**encoded, "location": "3:4"}, []):
        with pytest.raises((KeyError, TypeError, ValueError)):
            decode_diagnostic(broken, "x.py")


def test_buckets_keep_other_runs_entries(tmp_path: Path) -> None:
    settings = settings_key(RuleSelection(), None)
    a, b = write(tmp_path / "a.py", "a = 1\n"), write(tmp_path / "b.py", "b = 1\n")
    first, second = Cache(), Cache()
    first.bucket(tmp_path, settings).put(a, "hash-a", [])
    second.bucket(tmp_path, settings).put(b, "hash-b", [])
    assert first.save() == [] and second.save() == []
    reader = Cache().bucket(tmp_path, settings)
    assert reader.get(a, "hash-a") == [] and reader.get(b, "hash-b") == []
    assert reader.get(a, "another hash") is None
    # Entries of files that are gone are dropped on the next write.
    b.unlink()
    writer = Cache()
    writer.bucket(tmp_path, settings).put(a, "hash-a2", [])
    writer.save()
    assert set(load(only_cache_file(tmp_path))["files"]) == {"a.py"}
    assert settings_key(RuleSelection(), "2.4") != settings


# --- torchlint clean -----------------------------------------------------------------------


def test_clean_removes_every_cache_folder_below(tmp_path: Path, run: Run) -> None:
    write(tmp_path / "a" / "train.py", MISSING_STEP)
    write(tmp_path / "b" / "deeper" / "train.py", MISSING_STEP)
    run("check", *SELECT, ".", cwd=tmp_path / "a")
    run("check", *SELECT, ".", cwd=tmp_path / "b" / "deeper")
    run("check", *SELECT, ".", cwd=tmp_path)
    made = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob(CACHE_DIR_NAME))
    assert [str(p) for p in made] == [
        CACHE_DIR_NAME,
        f"a/{CACHE_DIR_NAME}",
        f"b/deeper/{CACHE_DIR_NAME}",
    ]

    partial = run("clean", cwd=tmp_path / "b")
    assert partial.code == 0
    assert partial.out.splitlines() == [f"Removed deeper/{CACHE_DIR_NAME}"]
    assert (tmp_path / "a" / CACHE_DIR_NAME).is_dir()

    everything = run("clean", cwd=tmp_path)
    assert everything.code == 0
    assert sorted(everything.out.splitlines()) == [
        f"Removed {CACHE_DIR_NAME}",
        f"Removed a/{CACHE_DIR_NAME}",
    ]
    assert list(tmp_path.rglob(CACHE_DIR_NAME)) == []
    assert (tmp_path / "a" / "train.py").is_file()

    nothing = run("clean", cwd=tmp_path)
    assert nothing.code == 0
    assert nothing.out.startswith("Nothing to clean")
