"""The results cache of `torchlint check`, so that a second run only analyses what changed.

Where: a `.torchlint_cache/` folder in the project root, the folder of the configuration file in
use (the `pyproject.toml` with the `[tool.torchlint]` table, or the one `--config` names), or the
current directory when there is none. Like Ruff's, the folder holds a `.gitignore` of `*` (so it
is never committed) and a `CACHEDIR.TAG` (so backup tools skip it).

What: one JSON file per torchlint build and effective settings,

    .torchlint_cache/<version>/<digest of build and settings>.json

mapping each file's path (relative to the root) to the blake2b hash of its bytes, the
diagnostics found in them and, when its analysis followed calls into other project files, the
hashes of those files' bytes as it read them (`"deps"`, keyed like the files: relative to the
root, absolute when outside it; left out when there are none). The build is the torchlint
version plus the size and modification time of every module of the installed package, so that
editing a rule in a checkout never serves stale results; the settings are the rules that run on
the file (`RuleSelection.cache_key()`, after per-file ignores), `target-torch-version` and
whether calls into other files are followed (`--no-project`). A file whose bytes hash
differently, or one of whose dependencies now hashes differently or cannot be read, is a miss
and is analysed again; nothing else (mtimes, sizes) is trusted.

Robustness: a missing, unreadable or corrupt cache file, or a malformed entry, is a miss, and
the next write replaces it; a cache that cannot be written is skipped. Writes go through a
temporary file and `os.replace`, merged with what is on disk at that moment, so two runs at
once lose at most each other's newest entries, never the file. Entries of files that no longer
exist are dropped when the file is written. Results with internal errors are never stored.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from torchlint import __version__
from torchlint.diagnostics import Diagnostic, Edit, Fix, Location, Severity

if TYPE_CHECKING:  # only its cache key is read: a cache does not load the rules
    from torchlint.selection import RuleSelection

CACHE_DIR_NAME = ".torchlint_cache"
FORMAT = 2  # bump when the layout of a cache file changes (2: entries gained "deps")
GITIGNORE = "# Automatically created by torchlint.\n*\n"
CACHEDIR_TAG = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by torchlint.\n"
    "# For information about cache directory tags, see https://bford.info/cachedir/\n"
)


def content_hash(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


@cache
def build_fingerprint() -> str:
    """The torchlint version and a digest of the package's modules (path, size, mtime)."""
    package = Path(__file__).resolve().parent
    digest = hashlib.blake2b(digest_size=8)
    for path in sorted(package.rglob("*.py")):
        try:
            info = path.stat()
        except OSError:
            continue
        relative = path.relative_to(package).as_posix()
        digest.update(f"{relative}\0{info.st_size}\0{info.st_mtime_ns}\n".encode())
    return f"{__version__}+{digest.hexdigest()}"


def settings_key(
    selection: RuleSelection, target_torch_version: str | None, project: bool = True
) -> str:
    """What, besides the file's bytes (and those of its dependencies), decides its diagnostics.
    `project`: whether calls into other project files are followed."""
    return f"rules={selection.cache_key()};target-torch-version={target_torch_version or ''}" + (
        "" if project else ";no-project"
    )


# --- diagnostics as JSON -------------------------------------------------------------------
# `Diagnostic.to_json()` is the public format (with a URL, without `related`); the cache keeps
# every field and leaves the file name out (it is the entry's key).


def _location(location: Location) -> list[int]:
    return [location.row, location.column]


def _read_location(value: Any) -> Location:
    row, column = value
    if not isinstance(row, int) or not isinstance(column, int):
        raise TypeError("a location is two integers")
    return Location(row, column)


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError("expected a string")
    return value


def encode_diagnostic(diagnostic: Diagnostic) -> dict[str, Any]:
    fix = diagnostic.fix
    return {
        "code": diagnostic.code,
        "name": diagnostic.name,
        "message": diagnostic.message,
        "severity": diagnostic.severity.value,
        "location": _location(diagnostic.location),
        "end_location": _location(diagnostic.end_location),
        "fix": None
        if fix is None
        else {
            "applicability": fix.applicability,
            "message": fix.message,
            "edits": [
                [edit.content, _location(edit.location), _location(edit.end_location)]
                for edit in fix.edits
            ],
        },
        "source": diagnostic.source,
        "related": [[note, _location(where)] for note, where in diagnostic.related],
        **({"cell": diagnostic.cell} if diagnostic.cell is not None else {}),
    }


def decode_diagnostic(value: Any, filename: str) -> Diagnostic:
    """The inverse of `encode_diagnostic`; raises KeyError, TypeError or ValueError on
    anything malformed."""
    if not isinstance(value, dict):
        raise TypeError("a diagnostic is an object")
    raw_fix = value["fix"]
    fix: Fix | None = None
    if raw_fix is not None:
        applicability = raw_fix["applicability"]
        if applicability not in ("safe", "unsafe"):
            raise ValueError(f"unknown applicability {applicability!r}")
        edits = tuple(
            Edit(_text(content), _read_location(start), _read_location(end))
            for content, start, end in raw_fix["edits"]
        )
        fix = Fix(applicability, _text(raw_fix["message"]), edits)
    return Diagnostic(
        code=_text(value["code"]),
        name=_text(value["name"]),
        message=_text(value["message"]),
        severity=Severity(value["severity"]),
        filename=filename,
        location=_read_location(value["location"]),
        end_location=_read_location(value["end_location"]),
        fix=fix,
        source=_text(value["source"]),
        related=tuple((_text(note), _read_location(where)) for note, where in value["related"]),
        cell=_cell(value.get("cell")),
    )


def _cell(value: Any) -> int | None:
    if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
        raise TypeError("a cell is an integer")
    return value


# --- one cache file ------------------------------------------------------------------------


@cache
def _file_mode() -> int:
    """The permissions a new file gets (`mkstemp` would make it private to its owner)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


def _write_atomic(path: Path, text: str) -> None:
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        with contextlib.suppress(OSError):
            os.chmod(temporary, _file_mode())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def _prepare_root(folder: Path) -> None:
    """Create the cache folder with its `.gitignore` and `CACHEDIR.TAG`."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, content in ((".gitignore", GITIGNORE), ("CACHEDIR.TAG", CACHEDIR_TAG)):
        marker = folder / name
        if not marker.exists():
            _write_atomic(marker, content)


class FileHashes:
    """The content hash of each file as it is now, read at most once per run (memoised: a file
    that many others depend on is hashed once). None for a file that cannot be read."""

    def __init__(self) -> None:
        self._known: dict[Path, str | None] = {}

    def remember(self, path: Path, digest: str) -> None:
        """A hash computed elsewhere (the files being checked are read and hashed anyway)."""
        self._known[Path(os.path.abspath(path))] = digest

    def current(self, path: Path) -> str | None:
        path = Path(os.path.abspath(path))
        if path not in self._known:
            try:
                with open(path, "rb") as handle:
                    self._known[path] = content_hash(handle.read())
            except OSError:
                self._known[path] = None
        return self._known[path]


@dataclass
class Bucket:
    """The cached results of one project root under one build and settings."""

    root: Path  # the project root; entry keys are relative to it
    settings: str
    path: Path  # the JSON file
    _entries: dict[str, Any] | None = field(default=None, repr=False)
    _updates: dict[str, Any] = field(default_factory=dict, repr=False)
    corrupt: bool = False  # the file on disk could not be used
    # The current hashes of dependencies, shared by the buckets of one run.
    hashes: FileHashes = field(default_factory=FileHashes, repr=False)

    def key(self, file: Path) -> str:
        try:
            return file.relative_to(self.root).as_posix()
        except ValueError:
            return file.as_posix()

    def _read(self) -> dict[str, Any]:
        try:
            raw = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {}
        except (OSError, UnicodeDecodeError):
            self.corrupt = True
            return {}
        try:
            document = json.loads(raw)
        except (ValueError, RecursionError):
            self.corrupt = True
            return {}
        if (
            not isinstance(document, dict)
            or document.get("format") != FORMAT
            or document.get("build") != build_fingerprint()
            or document.get("settings") != self.settings
            or not isinstance(document.get("files"), dict)
        ):
            self.corrupt = True
            return {}
        files: dict[str, Any] = document["files"]
        return files

    def entries(self) -> dict[str, Any]:
        if self._entries is None:
            self._entries = self._read()
        return self._entries

    def location(self, key: str) -> Path:
        """The file an entry key names (the inverse of `key`)."""
        path = Path(key)
        return path if path.is_absolute() else self.root / path

    def get(self, file: Path, digest: str) -> list[Diagnostic] | None:
        """The cached diagnostics of `file` when its bytes hash to `digest` and every file its
        analysis read still hashes as it did then, else None."""
        entry = self.entries().get(self.key(file))
        if not isinstance(entry, dict) or entry.get("hash") != digest:
            return None
        filename = str(file)
        try:
            dependencies = entry.get("deps", {})
            if not isinstance(dependencies, dict):
                raise TypeError("deps is an object")
            for key, recorded in dependencies.items():
                if not isinstance(recorded, str):
                    raise TypeError("a dependency's hash is a string")
                if self.hashes.current(self.location(key)) != recorded:
                    return None  # changed, gone or unreadable: analyse again
            raw = entry["diagnostics"]
            if not isinstance(raw, list):
                raise TypeError("diagnostics is a list")
            return [decode_diagnostic(item, filename) for item in raw]
        except (KeyError, TypeError, ValueError):
            self.corrupt = True
            return None

    def put(
        self,
        file: Path,
        digest: str,
        diagnostics: list[Diagnostic],
        dependencies: Mapping[Path, str] | Mapping[str, str] | None = None,
    ) -> None:
        """Store `file`'s diagnostics under its hash and those of the other files its analysis
        read (absolute paths to content hashes, as `Analysis.dependencies` has them)."""
        entry: dict[str, Any] = {
            "hash": digest,
            "diagnostics": [encode_diagnostic(d) for d in diagnostics],
        }
        if dependencies:
            entry["deps"] = {
                self.key(Path(str(path))): recorded
                for path, recorded in sorted(dependencies.items(), key=lambda item: str(item[0]))
            }
        key = self.key(file)
        self.entries()[key] = entry
        self._updates[key] = entry

    @property
    def dirty(self) -> bool:
        return bool(self._updates) or self.corrupt

    def save(self) -> None:
        """Merge this run's entries into the file on disk. Raises OSError."""
        if not self.dirty:
            return
        current = self._read()  # what other runs may have written since we read it
        current.update(self._updates)
        for key in list(current):
            if key in self._updates:
                continue
            if not os.path.exists(self.root / key):
                del current[key]
        document = {
            "format": FORMAT,
            "build": build_fingerprint(),
            "settings": self.settings,
            "files": current,
        }
        _prepare_root(self.root / CACHE_DIR_NAME)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        _write_atomic(self.path, json.dumps(document, separators=(",", ":")))
        self._entries = current
        self._updates = {}
        self.corrupt = False


class Cache:
    """The buckets one run uses, by project root and settings."""

    def __init__(self) -> None:
        self._buckets: dict[tuple[Path, str], Bucket] = {}
        self.hashes = FileHashes()

    def bucket(self, root: Path, settings: str) -> Bucket:
        root = Path(os.path.abspath(root))
        found = self._buckets.get((root, settings))
        if found is None:
            name = hashlib.blake2b(
                f"{FORMAT}\0{build_fingerprint()}\0{settings}".encode(), digest_size=8
            ).hexdigest()
            path = root / CACHE_DIR_NAME / __version__ / f"{name}.json"
            found = self._buckets[(root, settings)] = Bucket(
                root, settings, path, hashes=self.hashes
            )
        return found

    def save(self) -> list[str]:
        """Write every bucket with news; the problems, as messages (never raised)."""
        problems: list[str] = []
        for bucket in self._buckets.values():
            try:
                bucket.save()
            except OSError as exc:
                problems.append(f"cannot write the cache {bucket.path}: {exc.strerror or exc}")
        return problems


# --- torchlint clean -----------------------------------------------------------------------


def find_cache_dirs(start: Path) -> Iterator[Path]:
    """Every `.torchlint_cache` folder under `start` (itself included), without walking into
    `.git` folders or following symbolic links."""
    start = Path(os.path.abspath(start))
    if start.name == CACHE_DIR_NAME and start.is_dir():
        yield start
        return
    for folder, subfolders, _ in os.walk(start):
        keep = []
        for name in sorted(subfolders):
            if name == CACHE_DIR_NAME:
                yield Path(folder) / name
            elif name != ".git":
                keep.append(name)
        subfolders[:] = keep


def remove_cache_dir(folder: Path) -> None:
    """Remove one cache folder (a symbolic link to one loses the link only). Raises OSError."""
    if folder.is_symlink():
        folder.unlink()
    else:
        shutil.rmtree(folder)
