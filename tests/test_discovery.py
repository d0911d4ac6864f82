"""Finding the files to check, and reading them without hanging."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from torchlint.config import CliOverrides, ConfigResolver
from torchlint.discovery import ReadError, discover, display_path, read_file


def touch(path: Path, text: str = "x = 1\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def relative(paths: list[Path], root: Path) -> list[str]:
    return [p.relative_to(root).as_posix() for p in paths]


def test_walk_finds_python_files_sorted(tmp_path: Path) -> None:
    for name in (
        "b.py",
        "a.pyi",
        "pkg/z.py",
        "pkg/sub/y.py",
        "pkg/notes.txt",
        "pkg/script",
        ".hidden/x.py",
        "pkg/.venv/x.py",
        "venv/x.py",
        "pkg/__pycache__/x.py",
        "node_modules/x.py",
        "build/x.py",
        "dist/x.py",
        ".torchlint_cache/x.py",
        "lib/site-packages/x.py",
        ".git/x.py",
        ".dot.py",  # hidden files are checked, hidden folders are not
    ):
        touch(tmp_path / name)
    found = discover([tmp_path], ConfigResolver(cwd=tmp_path))
    assert found.errors == []
    assert relative(found.files, tmp_path) == [
        ".dot.py",
        "a.pyi",
        "b.py",
        "pkg/sub/y.py",
        "pkg/z.py",
    ]


def test_named_paths_are_always_checked_unless_force_exclude(tmp_path: Path) -> None:
    touch(tmp_path / "pyproject.toml", '[tool.torchlint]\nexclude = ["gen/", "skip_*.py"]\n')
    script = touch(tmp_path / "script")
    generated = touch(tmp_path / "gen" / "model.py")
    skipped = touch(tmp_path / "pkg" / "skip_me.py")
    built = touch(tmp_path / "build" / "lib.py")
    kept = touch(tmp_path / "pkg" / "keep.py")
    resolver = ConfigResolver(cwd=tmp_path)

    walked = discover([tmp_path], resolver)
    assert relative(walked.files, tmp_path) == ["pkg/keep.py"]

    named = [script, generated, skipped, built, kept, tmp_path / "gen"]
    found = discover(named, resolver)
    assert relative(found.files, tmp_path) == [
        "build/lib.py",
        "gen/model.py",
        "pkg/keep.py",
        "pkg/skip_me.py",
        "script",
    ]
    forced = discover(named, resolver, force_exclude=True)
    assert relative(forced.files, tmp_path) == ["pkg/keep.py", "script"]


def test_duplicates_are_checked_once(tmp_path: Path) -> None:
    file = touch(tmp_path / "pkg" / "a.py")
    found = discover(
        [tmp_path, tmp_path / "pkg", file, tmp_path / "pkg" / ".." / "pkg" / "a.py"],
        ConfigResolver(cwd=tmp_path),
    )
    assert found.files == [file]


def test_missing_path(tmp_path: Path) -> None:
    found = discover([tmp_path / "nope.py"], ConfigResolver(cwd=tmp_path), cwd=tmp_path)
    assert found.files == []
    assert found.errors == ["nope.py: no such file or directory"]


def test_symlink_loops_end(tmp_path: Path) -> None:
    touch(tmp_path / "pkg" / "a.py")
    (tmp_path / "pkg" / "up").symlink_to(tmp_path)  # back to an ancestor
    (tmp_path / "pkg" / "self").symlink_to(tmp_path / "pkg" / "self")  # a link to itself
    (tmp_path / "pkg" / "self.py").symlink_to(tmp_path / "pkg" / "self.py")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "pkg").symlink_to(tmp_path / "pkg")  # not a loop: walked
    found = discover([tmp_path], ConfigResolver(cwd=tmp_path), cwd=tmp_path)
    assert relative(found.files, tmp_path) == [
        "other/pkg/a.py",
        "other/pkg/self.py",
        "pkg/a.py",
        "pkg/self.py",  # listed; reading it fails (below)
    ]
    assert sorted(found.errors) == [
        "other/pkg/self: symbolic link loop; not followed",
        "other/pkg/up: symbolic link loop (it leads back to .); not followed",
        "pkg/self: symbolic link loop; not followed",
        "pkg/up: symbolic link loop (it leads back to .); not followed",
    ]
    with pytest.raises(ReadError, match="symbolic link loop"):
        read_file(tmp_path / "pkg" / "self.py")

    named = discover([tmp_path / "pkg" / "self"], ConfigResolver(cwd=tmp_path), cwd=tmp_path)
    assert named.files == []
    assert named.errors == ["pkg/self: symbolic link loop (too many levels of symbolic links)"]


def test_read_file_refuses_fifos_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.py"
    os.mkfifo(fifo)
    outcome: list[str] = []

    def attempt() -> None:
        try:
            read_file(fifo)
        except ReadError as exc:
            outcome.append(str(exc))

    thread = threading.Thread(target=attempt, daemon=True)
    thread.start()
    thread.join(timeout=10)
    assert not thread.is_alive(), "reading a FIFO blocked"
    assert outcome == ["not a regular file; skipped"]

    with pytest.raises(ReadError, match="not a regular file"):
        read_file(tmp_path)  # a folder
    with pytest.raises(ReadError, match="no such file"):
        read_file(tmp_path / "missing.py")


def test_read_file_reads_bytes_as_they_are(tmp_path: Path) -> None:
    data = b"\xef\xbb\xbfx = 1\r\n" + bytes(range(256)) * 5000
    (tmp_path / "big.py").write_bytes(data)
    assert read_file(tmp_path / "big.py") == data


def test_excludes_follow_the_nearest_config(tmp_path: Path) -> None:
    touch(tmp_path / "pyproject.toml", '[tool.torchlint]\nexclude = ["/top.py"]\n')
    touch(tmp_path / "top.py")
    touch(tmp_path / "sub" / "pyproject.toml", '[tool.torchlint]\nexclude = ["/inner.py"]\n')
    touch(tmp_path / "sub" / "inner.py")
    touch(tmp_path / "sub" / "top.py")
    found = discover([tmp_path], ConfigResolver(cwd=tmp_path))
    assert relative(found.files, tmp_path) == ["sub/top.py"]

    explicit = ConfigResolver(
        CliOverrides(config=tmp_path / "sub" / "pyproject.toml"), cwd=tmp_path
    )
    found = discover([tmp_path], explicit)
    assert relative(found.files, tmp_path) == ["sub/top.py", "top.py"]


def test_display_path(tmp_path: Path) -> None:
    inside = tmp_path / "a" / "b.py"
    assert display_path(inside, tmp_path) == os.path.join("a", "b.py")
    assert display_path(tmp_path, tmp_path) == "."
    outside = tmp_path.parent / "elsewhere.py"
    assert display_path(outside, tmp_path) == str(outside)
