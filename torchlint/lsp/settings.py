"""The editor's `torchlint` settings, as the server reads them.

The client answers `workspace/configuration` (section `torchlint`) once per workspace folder
and once without a scope (for files outside every folder). Keys the server uses:

- `enable` (bool, default true): lint at all;
- `run` (`"onType"` or `"onSave"`, default `"onType"`): lint while typing, or only when a
  document is opened or saved;
- `select`, `ignore` (lists of rule codes, prefixes, names or `ALL`): like the command line's
  `--select` (replaces the configuration's `select`) and `--ignore` (adds to its `ignore`);
- `severity` (a table): the severity shown for a rule, keyed by code or name, valued `error`,
  `warning`, `info` (or `information`) or `hint`;
- `runtime` (a table; `runtime.enable` etc. as flat keys are read too), for the runtime checks
  the code lenses start (`workspace/executeCommand` only, never on their own):
  `enable` (bool, default true), `timeoutSeconds` (a positive number, default 300: the whole
  run, the script's start included), `steps` (a positive integer, default: the check's own,
  200 for overfit and 5 for the gradient scan).

Other keys (`interpreter`, `importStrategy`, ...) belong to the editor extension and are
ignored here. Bad values are dropped with a message, never fatal.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from pygls.uris import to_fs_path

from torchlint.config import CliOverrides
from torchlint.lsp.convert import SEVERITIES
from torchlint.rules import lookup
from torchlint.selection import SelectorError, validate_selectors

RunMode = Literal["onType", "onSave"]

DEFAULT_RUNTIME_TIMEOUT_SECONDS = 300.0


@dataclass(frozen=True)
class RuntimeSettings:
    """The `runtime` table: how the runtime checks run (`steps` None: the check's default)."""

    enable: bool = True
    timeout_seconds: float = DEFAULT_RUNTIME_TIMEOUT_SECONDS
    steps: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "enable": self.enable,
            "timeoutSeconds": self.timeout_seconds,
            "steps": self.steps,
        }


DEFAULT_RUNTIME = RuntimeSettings()


@dataclass(frozen=True)
class ClientSettings:
    enable: bool = True
    run: RunMode = "onType"
    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] = ()
    # rule code -> "error" / "warning" / "info" / "information" / "hint"
    severity: Mapping[str, str] = field(default_factory=dict)
    runtime: RuntimeSettings = DEFAULT_RUNTIME

    @property
    def overrides(self) -> CliOverrides:
        return CliOverrides(select=self.select, ignore=self.ignore)

    def to_json(self) -> dict[str, Any]:
        return {
            "enable": self.enable,
            "run": self.run,
            "select": list(self.select) if self.select is not None else None,
            "ignore": list(self.ignore),
            "severity": dict(self.severity),
            "runtime": self.runtime.to_json(),
        }


DEFAULT_SETTINGS = ClientSettings()


def _selectors(value: Any, key: str, problems: list[str]) -> tuple[str, ...] | None:
    if isinstance(value, str):  # a comma-separated string, as on the command line
        value = [part for part in value.split(",") if part.strip()]
    if not isinstance(value, list | tuple):
        problems.append(f"`{key}` must be a list of rule codes or names; ignored")
        return None
    kept: list[str] = []
    for item in value:
        if not isinstance(item, str):
            problems.append(f"`{key}`: {item!r} is not a string; ignored")
            continue
        try:
            kept.extend(validate_selectors([item], f"`{key}`"))
        except SelectorError as exc:
            problems.append(f"{exc}; ignored")
    return tuple(kept)


def _severity(value: Any, problems: list[str]) -> dict[str, str]:
    if not isinstance(value, Mapping):
        problems.append("`severity` must be a table of rule code or name to severity; ignored")
        return {}
    result: dict[str, str] = {}
    for key, level in value.items():
        rule = lookup(str(key).strip())
        if rule is None:
            problems.append(f"`severity`: `{key}` is not a rule code or name; ignored")
            continue
        if not isinstance(level, str) or level.strip().lower() not in SEVERITIES:
            problems.append(
                f"`severity.{key}`: {level!r} is not one of {', '.join(SEVERITIES)}; ignored"
            )
            continue
        result[rule.code] = level.strip().lower()
    return result


def _runtime(raw: Mapping[str, Any], problems: list[str]) -> RuntimeSettings:
    """The `runtime` table, or its keys spelled flat (`"runtime.enable": false`), as clients
    that do not nest dotted settings send them."""
    table: dict[str, Any] = {}
    nested = raw.get("runtime")
    if isinstance(nested, Mapping):
        table.update(nested)
    elif nested is not None:
        problems.append("`runtime` must be a table; using the default runtime settings")
    for key, value in raw.items():
        if isinstance(key, str) and key.startswith("runtime."):
            table[key.removeprefix("runtime.")] = value
    enable = table.get("enable", True)
    if not isinstance(enable, bool):
        problems.append("`runtime.enable` must be true or false; using true")
        enable = True
    timeout = table.get("timeoutSeconds", DEFAULT_RUNTIME_TIMEOUT_SECONDS)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0:
        problems.append(
            f"`runtime.timeoutSeconds` must be a positive number of seconds, got {timeout!r}; "
            f"using {DEFAULT_RUNTIME_TIMEOUT_SECONDS:g}"
        )
        timeout = DEFAULT_RUNTIME_TIMEOUT_SECONDS
    steps = table.get("steps")
    if steps is not None and (isinstance(steps, bool) or not isinstance(steps, int) or steps < 1):
        problems.append(
            f"`runtime.steps` must be a positive whole number, got {steps!r}; "
            "using the check's default"
        )
        steps = None
    return RuntimeSettings(enable, float(timeout), steps)


def parse_settings(raw: Any) -> tuple[ClientSettings, list[str]]:
    """Settings from what the client sent (None, a table, or junk), and the problems found."""
    problems: list[str] = []
    if raw is None:
        return DEFAULT_SETTINGS, problems
    if not isinstance(raw, Mapping):
        problems.append(f"the `torchlint` settings must be a table, got {type(raw).__name__}")
        return DEFAULT_SETTINGS, problems
    enable = raw.get("enable", True)
    if not isinstance(enable, bool):
        problems.append("`enable` must be true or false; using true")
        enable = True
    run: RunMode = "onType"
    raw_run = raw.get("run", "onType")
    if raw_run == "onSave":
        run = "onSave"
    elif raw_run != "onType":
        problems.append(f"`run` must be `onType` or `onSave`, got {raw_run!r}; using onType")
    select = None
    if raw.get("select") is not None:
        select = _selectors(raw["select"], "select", problems)
    ignore = _selectors(raw.get("ignore") or [], "ignore", problems) or ()
    severity = _severity(raw.get("severity") or {}, problems)
    runtime = _runtime(raw, problems)
    return ClientSettings(enable, run, select, ignore, severity, runtime), problems


@dataclass
class SettingsStore:
    """The settings of each workspace folder (by folder URI) and the global ones; a document
    takes those of the innermost folder that contains it."""

    global_settings: ClientSettings = DEFAULT_SETTINGS
    folders: dict[str, ClientSettings] = field(default_factory=dict)

    def for_uri(self, uri: str) -> ClientSettings:
        folder = innermost_folder(uri, self.folders)
        return self.folders[folder] if folder is not None else self.global_settings


def _uri_key(uri: str) -> str:
    """A URI in a comparable form: its file-system path when it has one (clients spell drive
    letters and escapes differently), else the URI; with a trailing separator."""
    path = to_fs_path(uri)
    if path is None:
        return uri.rstrip("/") + "/"
    return os.path.normcase(os.path.abspath(path)).rstrip(os.sep) + os.sep


def innermost_folder(uri: str, folders: Iterable[str]) -> str | None:
    """The folder URI among `folders` that contains the document `uri` most closely."""
    target = _uri_key(uri)
    best: str | None = None
    best_length = -1
    for folder in folders:
        key = _uri_key(folder)
        if target.startswith(key) and len(key) > best_length:
            best, best_length = folder, len(key)
    return best
