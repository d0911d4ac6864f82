"""Pinned public sources for the real-code benchmarks (benchmarks/mature/, benchmarks/bugfixes/):
read files of a repository at a commit, and run torchlint over them.

Sources come from a local bare mirror when there is one (`MIRRORS/<owner>+<name>/repo`, the
layout the team's fetch tool leaves, or `--mirrors DIR`), otherwise from GitHub over HTTPS
(the commit's tarball, or one file's raw text). Nothing fetched is ever committed: callers
write it under ignored folders.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import tarfile
import urllib.request
from collections.abc import Callable, Iterable
from functools import cache
from pathlib import Path
from typing import Any

DEFAULT_MIRRORS = Path(os.environ.get("TORCHLINT_MIRRORS", "/work/.mirror"))
PACKAGING = ("pyproject.toml", "setup.py", "setup.cfg")
ROOT_MARKER = "pyproject.toml"


@cache
def glob_pattern(glob: str) -> re.Pattern[str]:
    """A path glob as a regular expression: `**/` any folders (or none), `*` and `?` within
    one path segment."""
    out = []
    i = 0
    while i < len(glob):
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif glob[i] == "*":
            out.append("[^/]*")
            i += 1
        elif glob[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(glob[i]))
            i += 1
    return re.compile("".join(out) + r"\Z")


def matches(path: str, globs: Iterable[str]) -> bool:
    return any(glob_pattern(glob).match(path) for glob in globs)


def mirror_of(repository: str, mirrors: Path) -> Path | None:
    """The bare mirror of `owner/name` under `mirrors`, if there is one."""
    candidate = mirrors / repository.replace("/", "+") / "repo"
    for git_dir in (candidate, candidate / ".git"):
        if (git_dir / "HEAD").exists():
            return git_dir
    return None


def _git(git_dir: Path, *args: str) -> bytes:
    done = subprocess.run(["git", f"--git-dir={git_dir}", *args], capture_output=True, check=False)
    if done.returncode != 0:
        message = done.stderr.decode(errors="replace").strip()
        raise LookupError(f"git {' '.join(args[:2])} in {git_dir}: {message}")
    return done.stdout


def _download(url: str) -> bytes:
    request = urllib.request.Request(url, headers={"User-Agent": "torchlint-benchmarks"})
    with urllib.request.urlopen(request, timeout=120) as response:
        data: bytes = response.read()
    return data


def read_file(repository: str, commit: str, path: str, mirrors: Path) -> bytes:
    """The bytes of `path` at `commit`; LookupError when the file does not exist there."""
    git_dir = mirror_of(repository, mirrors)
    if git_dir is not None:
        try:
            return _git(git_dir, "show", f"{commit}:{path}")
        except LookupError:
            if _has_commit(git_dir, commit):
                raise
    try:
        return _download(f"https://raw.githubusercontent.com/{repository}/{commit}/{path}")
    except OSError as error:
        raise LookupError(f"{repository}@{commit[:10]}:{path}: {error}") from error


def _has_commit(git_dir: Path, commit: str) -> bool:
    try:
        _git(git_dir, "cat-file", "-e", f"{commit}^{{commit}}")
    except LookupError:
        return False
    return True


def extract_tree(
    repository: str, commit: str, dest: Path, keep: Callable[[str], bool], mirrors: Path
) -> int:
    """Write the files of `commit` for which `keep(path)` holds under `dest`; how many."""
    git_dir = mirror_of(repository, mirrors)
    if git_dir is not None and _has_commit(git_dir, commit):
        files = _read_blobs(git_dir, commit, keep)
    else:
        files = _read_tarball(repository, commit, keep)
    for path, data in files.items():
        if ".." in Path(path).parts:
            continue
        target = dest / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return len(files)


def _read_blobs(git_dir: Path, commit: str, keep: Callable[[str], bool]) -> dict[str, bytes]:
    """The kept files of `commit` in a mirror, read blob by blob (a snapshot may lack its
    largest files, which `git archive` would stumble on)."""
    listing = _git(git_dir, "ls-tree", "-r", "-z", commit).split(b"\0")
    wanted: list[tuple[str, str]] = []
    for entry in listing:
        if not entry:
            continue
        header, _, name = entry.partition(b"\t")
        _mode, kind, sha = header.decode().split()
        path = name.decode("utf-8", errors="replace")
        if kind == "blob" and keep(path):
            wanted.append((sha, path))
    batch = subprocess.run(
        ["git", f"--git-dir={git_dir}", "cat-file", "--batch"],
        input="".join(f"{sha}\n" for sha, _ in wanted).encode(),
        capture_output=True,
        check=True,
    ).stdout
    files: dict[str, bytes] = {}
    offset = 0
    for _sha, path in wanted:
        end = batch.index(b"\n", offset)
        header = batch[offset:end].split()
        offset = end + 1
        if header[-1] == b"missing":
            continue
        size = int(header[2])
        files[path] = batch[offset : offset + size]
        offset += size + 1
    return files


def _read_tarball(repository: str, commit: str, keep: Callable[[str], bool]) -> dict[str, bytes]:
    """The kept files of `commit` from GitHub's tarball of it."""
    name = repository.split("/")[1]
    archive = _download(f"https://codeload.github.com/{repository}/tar.gz/{commit}")
    prefix = f"{name}-{commit}/"
    files: dict[str, bytes] = {}
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        for member in tar:
            if not member.isfile() or not member.name.startswith(prefix):
                continue
            path = member.name[len(prefix) :]
            handle = tar.extractfile(member) if keep(path) else None
            if handle is not None:
                files[path] = handle.read()
    return files


def ensure_root(folder: Path) -> None:
    """Make `folder` its own project root for torchlint (and never a part of this
    repository's project), whatever packaging files the source had."""
    if not any((folder / name).exists() for name in PACKAGING):
        (folder / ROOT_MARKER).write_text("", encoding="utf-8")


def run_torchlint(
    files: list[Path], cwd: Path, project: bool = True, jobs: int | None = None
) -> list[dict[str, Any]]:
    """torchlint's JSON findings for `files` (whole-project mode unless `project` is false);
    SystemExit when torchlint itself fails (exit status 2 or a crash)."""
    if not files:
        return []
    command = [sys.executable, "-m", "torchlint", "check", "--no-cache"]
    command += ["--output-format", "json", *([] if project else ["--no-project"])]
    command += [] if jobs is None else ["--jobs", str(jobs)]
    found: list[dict[str, Any]] = []
    for start in range(0, len(files), 400):
        chunk = [str(path.resolve()) for path in files[start : start + 400]]
        done = subprocess.run(
            [*command, *chunk], capture_output=True, text=True, cwd=cwd, check=False
        )
        if done.returncode not in (0, 1):
            raise SystemExit(f"torchlint failed in {cwd} (exit {done.returncode}):\n{done.stderr}")
        found.extend(json.loads(done.stdout or "[]"))
    return found


def line_text(path: Path, row: int) -> str:
    """The stripped text of line `row` (1-based) of `path`, '' when out of range."""
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    return lines[row - 1].strip() if 0 < row <= len(lines) else ""
