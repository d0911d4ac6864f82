"""Configuration: the `[tool.torchlint]` table of a `pyproject.toml`, found per file.

The configuration of a file comes from the nearest `pyproject.toml` that has a
`[tool.torchlint]` table, found by walking up from the file's folder (a `pyproject.toml`
without the table is passed over, like Ruff does, so a sub-package's packaging metadata does
not hide the project's settings). `--config PATH` names one file for every path instead.

Keys:

- `select`, `ignore`: lists of selectors (codes `TL101`, prefixes `TL1`, names
  `missing-optimizer-step`, or `ALL`).
- `exclude`: gitignore-style patterns, relative to the configuration's folder, of files and
  folders not to check when walking folders. They add to the built-in exclusions (`.git`,
  `.venv`, `build`, ...).
- `per-file-ignores`: a table mapping a pattern to a list of selectors ignored in the files
  it matches. The patterns use the same gitignore-style syntax as `exclude`, matched against
  the file's path relative to the configuration's folder: `tests/` or `tests/**` match every
  file below `tests`, `*_test.py` matches that name at any depth, `/train.py` only the file
  next to the `pyproject.toml`. A pattern starting with `!` applies to the files it does
  *not* match.
- `target-torch-version`: the oldest PyTorch the project supports, as `"2.3"` or `"2.3.1"`.

Pattern syntax (gitignore's): `*` matches anything but `/`, `?` one character but `/`,
`[abc]` / `[!abc]` a character class, `**` any number of folders (`**/x`, `a/**/b`, `a/**`),
a leading `/` or a `/` in the middle anchors the pattern to the configuration's folder (a
pattern without `/` matches a name at any depth), a trailing `/` matches folders only, and a
leading `!` re-includes what an earlier pattern excluded (not inside an excluded folder).
"""

from __future__ import annotations

import difflib
import os
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from torchlint.requirements import declared_torch_floor
from torchlint.selection import (
    RuleSelection,
    SelectorError,
    parse_version,
    validate_selectors,
)

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

CONFIG_FILENAME = "pyproject.toml"

KNOWN_KEYS = ("select", "ignore", "exclude", "per-file-ignores", "target-torch-version")

# Folders never walked into (an explicitly named path is still checked, unless
# `--force-exclude`). Hidden folders (`.name`) are skipped as well.
DEFAULT_EXCLUDED_NAMES = frozenset(
    {
        ".git",
        ".venv",
        "venv",
        "__pycache__",
        "node_modules",
        "build",
        "dist",
        ".torchlint_cache",
        "site-packages",
    }
)

_TORCH_VERSION = re.compile(r"\d+\.\d+(?:\.\d+)?")


class ConfigError(Exception):
    """A configuration file that cannot be used; the message names the file and the key."""


# --- gitignore-style patterns ---------------------------------------------------------------


def _translate_segment(segment: str) -> str:
    """Translate one path segment of a glob (no `/` in it) into a regular expression."""
    out: list[str] = []
    i = 0
    n = len(segment)
    while i < n:
        ch = segment[i]
        if ch == "*":
            while i + 1 < n and segment[i + 1] == "*":
                i += 1
            out.append("[^/]*")
        elif ch == "?":
            out.append("[^/]")
        elif ch == "\\" and i + 1 < n:
            i += 1
            out.append(re.escape(segment[i]))
        elif ch == "[":
            j = i + 1
            negated = j < n and segment[j] in "!^"
            if negated:
                j += 1
            start = j
            if j < n and segment[j] == "]":
                j += 1
            while j < n and segment[j] != "]":
                j += 1
            if j >= n:  # no closing bracket: a literal `[`
                out.append(re.escape(ch))
            else:
                body = "".join(c if c == "-" else re.escape(c) for c in segment[start:j])
                out.append(f"[{'^' if negated else ''}{body}]" if body else "(?!)")
                i = j
        else:
            out.append(re.escape(ch))
        i += 1
    return "".join(out)


@dataclass(frozen=True)
class PathPattern:
    """One gitignore-style pattern, matched against `/`-separated relative paths."""

    pattern: str
    negated: bool = field(init=False)
    directory_only: bool = field(init=False)
    anchored: bool = field(init=False)
    _regex: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        body = self.pattern.strip()
        negated = body.startswith("!")
        if negated:
            body = body[1:]
        directory_only = body.endswith("/")
        body = body.rstrip("/")
        anchored = "/" in body
        body = body.lstrip("/")
        if not body:
            raise ValueError(f"`{self.pattern}` is not a usable pattern")
        parts = body.split("/")
        regex = ""
        for index, part in enumerate(parts):
            last = index == len(parts) - 1
            if part == "**":
                regex += ".*" if last else "(?:[^/]+/)*"
            else:
                regex += _translate_segment(part) + ("" if last else "/")
        if not anchored:
            regex = "(?:.*/)?" + regex
        object.__setattr__(self, "negated", negated)
        object.__setattr__(self, "directory_only", directory_only)
        object.__setattr__(self, "anchored", anchored)
        object.__setattr__(self, "_regex", re.compile(regex, re.DOTALL))

    def matches(self, relative: str, is_dir: bool) -> bool:
        """Whether the pattern (ignoring a leading `!`) matches this very path."""
        if self.directory_only and not is_dir:
            return False
        return self._regex.fullmatch(relative) is not None


def _leaf_verdict(
    patterns: Sequence[PathPattern], relative: str, is_dir: bool, anchored_ok: bool
) -> bool | None:
    verdict: bool | None = None
    for pattern in patterns:
        if not anchored_ok and pattern.anchored:
            continue
        if pattern.matches(relative, is_dir):
            verdict = not pattern.negated
    return verdict


def patterns_match(
    patterns: Sequence[PathPattern],
    parts: Sequence[str],
    is_dir: bool,
    *,
    ancestors: bool = True,
    anchored_ok: bool = True,
) -> bool:
    """Whether `patterns` select the path made of `parts` (relative to the patterns' folder).

    The last matching pattern wins (a `!pattern` re-includes); with `ancestors`, a path below a
    selected folder is selected too, whatever the later patterns say about the path itself.
    """
    if not patterns or not parts:
        return False
    levels = range(1, len(parts) + 1) if ancestors else range(len(parts), len(parts) + 1)
    for level in levels:
        relative = "/".join(parts[:level])
        level_is_dir = level < len(parts) or is_dir
        if _leaf_verdict(patterns, relative, level_is_dir, anchored_ok):
            return True
    return False


# --- the configuration of one pyproject.toml ------------------------------------------------


@dataclass(frozen=True)
class PerFileIgnore:
    pattern: PathPattern  # without its leading `!`
    selectors: tuple[str, ...]
    negated: bool = False  # `!pattern`: the files the pattern does not match

    def applies(self, parts: Sequence[str], anchored_ok: bool) -> bool:
        matched = patterns_match((self.pattern,), parts, False, anchored_ok=anchored_ok)
        return matched != self.negated


@dataclass(frozen=True)
class Config:
    """The `[tool.torchlint]` settings of one file (or the defaults: `path` is None)."""

    root: Path  # the folder patterns are relative to
    path: Path | None = None
    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] = ()
    exclude: tuple[PathPattern, ...] = ()
    per_file_ignores: tuple[PerFileIgnore, ...] = ()
    target_torch_version: str | None = None
    has_table: bool = False

    def relative_parts(self, path: Path) -> tuple[tuple[str, ...], bool]:
        """`path`'s components below `root`, and whether it is below it at all (when it is not,
        only its name is returned)."""
        try:
            relative = path.relative_to(self.root)
        except ValueError:
            return (path.name,), False
        return relative.parts, True

    def selection(self, file: Path, overrides: CliOverrides) -> RuleSelection:
        select = overrides.select if overrides.select is not None else self.select
        target = parse_version(self.target_torch_version)
        declared = declared_torch_floor(file.parent) if target is None else None
        selection = RuleSelection(
            select,
            (*self.ignore, *overrides.ignore),
            target,
            declared,
            extend=overrides.extend_select,
        )
        if self.per_file_ignores:
            parts, inside = self.relative_parts(file)
            for entry in self.per_file_ignores:
                if entry.applies(parts, inside):
                    selection = selection.with_ignored(entry.selectors)
        return selection

    def excludes(self, path: Path, is_dir: bool, *, ancestors: bool) -> bool:
        if not self.exclude:
            return False
        parts, inside = self.relative_parts(path)
        return patterns_match(
            self.exclude, parts, is_dir, ancestors=ancestors and inside, anchored_ok=inside
        )


@dataclass(frozen=True)
class CliOverrides:
    """What the command line says about rule selection, over the configuration files."""

    select: tuple[str, ...] | None = None  # replaces the configuration's `select`
    ignore: tuple[str, ...] = ()  # added to the configuration's `ignore`
    config: Path | None = None  # use this file for every path
    extend_select: tuple[str, ...] = ()  # added to the (configuration's or the CLI's) `select`


def _string_list(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ConfigError(f"{where}: expected a list of strings, got {_describe(value)}")
    return tuple(value)


def _describe(value: Any) -> str:
    if isinstance(value, list):
        kinds = sorted({type(item).__name__ for item in value if not isinstance(item, str)})
        return f"a list containing {', '.join(kinds)}" if kinds else "a list"
    if isinstance(value, dict):
        return "a table"
    return f"{type(value).__name__} `{value!r}`"


def _selectors(value: Any, where: str) -> tuple[str, ...]:
    items = _string_list(value, where)
    try:
        return validate_selectors(items, where)
    except SelectorError as exc:
        raise ConfigError(str(exc)) from None


def _patterns(value: Any, where: str) -> tuple[PathPattern, ...]:
    patterns = []
    for item in _string_list(value, where):
        try:
            patterns.append(PathPattern(item))
        except ValueError as exc:
            raise ConfigError(f"{where}: {exc}") from None
    return tuple(patterns)


def parse_config(table: Any, path: Path) -> Config:
    """Validate a `[tool.torchlint]` table (already read from `path`) into a `Config`."""
    prefix = f"{path}: [tool.torchlint]"
    if not isinstance(table, dict):
        raise ConfigError(f"{prefix}: expected a table, got {_describe(table)}")
    for key in table:
        if key not in KNOWN_KEYS:
            close = difflib.get_close_matches(key, KNOWN_KEYS, n=1)
            hint = f"; did you mean `{close[0]}`?" if close else ""
            raise ConfigError(
                f"{prefix} {key}: unknown key{hint} (known keys: {', '.join(KNOWN_KEYS)})"
            )
    select = _selectors(table["select"], f"{prefix} select") if "select" in table else None
    ignore = _selectors(table.get("ignore", []), f"{prefix} ignore")
    exclude = _patterns(table.get("exclude", []), f"{prefix} exclude")
    per_file: list[PerFileIgnore] = []
    raw_per_file = table.get("per-file-ignores", {})
    if not isinstance(raw_per_file, dict):
        raise ConfigError(
            f"{prefix} per-file-ignores: expected a table of pattern = [selectors], "
            f"got {_describe(raw_per_file)}"
        )
    for pattern, selectors in raw_per_file.items():
        where = f'{prefix} per-file-ignores."{pattern}"'
        negated = pattern.strip().startswith("!")
        try:
            compiled = PathPattern(pattern.strip().removeprefix("!"))
        except ValueError as exc:
            raise ConfigError(f"{where}: {exc}") from None
        per_file.append(PerFileIgnore(compiled, _selectors(selectors, where), negated))
    version = table.get("target-torch-version")
    if version is not None and (
        not isinstance(version, str) or not _TORCH_VERSION.fullmatch(version.strip())
    ):
        raise ConfigError(
            f'{prefix} target-torch-version: expected a version string such as "2.3", '
            f"got {_describe(version)}"
        )
    return Config(
        root=path.parent,
        path=path,
        select=select,
        ignore=ignore,
        exclude=exclude,
        per_file_ignores=tuple(per_file),
        target_torch_version=version.strip() if isinstance(version, str) else None,
        has_table=True,
    )


def load_config(path: Path | str) -> Config:
    """Read one `pyproject.toml`. Without a `[tool.torchlint]` table: the defaults."""
    path = Path(os.path.abspath(path))
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the file: {exc.strerror or exc}") from None
    try:
        document = tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    tool = document.get("tool")
    if not isinstance(tool, dict) or "torchlint" not in tool:
        return Config(root=path.parent, path=path)
    return parse_config(tool["torchlint"], path)


class ConfigResolver:
    """Finds the configuration of each path, caching the lookups per folder."""

    def __init__(self, overrides: CliOverrides | None = None, cwd: Path | None = None) -> None:
        self.overrides = overrides or CliOverrides()
        self.cwd = Path(os.path.abspath(cwd or Path.cwd()))
        self._by_dir: dict[Path, Config] = {}
        self._fixed: Config | None = None
        if self.overrides.config is not None:
            self._fixed = load_config(self.overrides.config)
        self._default = Config(root=self.cwd)

    def config_for_dir(self, directory: Path) -> Config:
        """The configuration that governs the files in `directory` (an absolute path)."""
        if self._fixed is not None:
            return self._fixed
        visited: list[Path] = []
        found: Config | None = None
        for folder in (directory, *directory.parents):
            cached = self._by_dir.get(folder)
            if cached is not None:
                found = cached
                break
            visited.append(folder)
            candidate = folder / CONFIG_FILENAME
            if candidate.is_file():
                config = load_config(candidate)
                if config.has_table:
                    found = config
                    break
        result = found or self._default
        for folder in visited:
            self._by_dir[folder] = result
        return result

    def config_for(self, path: Path) -> Config:
        """The configuration of a file (or of a folder's entries, given the folder)."""
        path = Path(os.path.abspath(path))
        return self.config_for_dir(path if path.is_dir() else path.parent)

    def selection_for(self, file: Path) -> RuleSelection:
        file = Path(os.path.abspath(file))
        return self.config_for_dir(file.parent).selection(file, self.overrides)

    def is_excluded(self, path: Path, is_dir: bool, *, ancestors: bool) -> bool:
        """Whether `path` is excluded by the built-in exclusions or the `exclude` of the
        configuration governing its folder. With `ancestors` (for explicitly named paths under
        `--force-exclude`) its parent folders are checked too, up to the configuration's folder
        (or the current directory without one)."""
        path = Path(os.path.abspath(path))
        config = self.config_for_dir(path.parent)
        if ancestors:
            base = config.root if config.path is not None else self.cwd
            try:
                parts = path.relative_to(base).parts
            except ValueError:
                parts = (path.name,)
            dirs = [*((name, True) for name in parts[:-1]), (parts[-1] if parts else "", is_dir)]
        else:
            dirs = [(path.name, is_dir)]
        if any(is_dir_ and is_default_excluded(name) for name, is_dir_ in dirs):
            return True
        return config.excludes(path, is_dir, ancestors=ancestors)


def is_default_excluded(name: str) -> bool:
    """Whether a folder of this name is skipped when walking (hidden or a built-in name)."""
    return name in DEFAULT_EXCLUDED_NAMES or (name.startswith(".") and name not in (".", ".."))


def resolve_settings(
    file_path: Path | str, cli_overrides: CliOverrides | None = None
) -> RuleSelection:
    """The rules that run on `file_path`: its configuration, the per-file ignores that match
    it, and the command-line overrides. Raises `ConfigError`."""
    return ConfigResolver(cli_overrides).selection_for(Path(file_path))


def parse_selector_option(values: Iterable[str] | None, option: str) -> tuple[str, ...] | None:
    """Comma-separated, repeatable `--select` / `--ignore` values, validated."""
    if values is None:
        return None
    items = [part.strip() for value in values for part in value.split(",")]
    try:
        return validate_selectors([item for item in items if item], option)
    except SelectorError as exc:
        raise ConfigError(str(exc)) from None
