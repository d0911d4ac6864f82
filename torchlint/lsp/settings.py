"""The editor's `torchlint` settings, as the server reads them.

The client answers `workspace/configuration` (section `torchlint`) once per workspace folder
and once without a scope (for files outside every folder). Keys the server uses:

- `enable` (bool, default true): lint at all;
- `run` (`"onType"` or `"onSave"`, default `"onType"`): lint while typing, or only when a
  document is opened or saved;
- `select`, `extendSelect`, `ignore` (lists of rule codes, prefixes, names or `ALL`): like the
  command line's `--select` (replaces the configuration's `select`), `--extend-select` (adds
  to it) and `--ignore` (adds to its `ignore`);
- `severity` (a table): the severity shown for a rule, keyed by code or name, valued `error`,
  `warning`, `info` (or `information`) or `hint`;
- `exclude` (a list of gitignore-style patterns, relative to the workspace folder): files the
  editor does not lint, on top of the configuration's `exclude`;
- `configuration` (a path): the configuration file to use instead of the nearest
  `pyproject.toml` (`--config`); the client expands `${workspaceFolder}` in it;
- `showSyntaxErrors` (bool, default true): publish TL001 for a block that does not parse (the
  rest of the file is checked either way);
- `showNotifications` (`off`, `onError`, `onWarning`, `always`; default `onWarning`): which of
  the server's own messages (bad settings, a broken configuration, internal errors) also pop
  up, beside the log;
- `lint.args` (a list of strings; `lint` as a table with `args` too): `torchlint check` options
  as on the command line, applied after the settings above as if typed after them: `--select`,
  `--extend-select`, `--ignore` (comma-separated rules; `--opt=value` or `--opt value`),
  `--config PATH` and `--no-project` (analyse each file alone). Options of `check` that mean
  nothing for one file in an editor (`--fix`, `--output-format`, paths, ...) are named in one
  message and ignored, as are unknown ones;
- `runtime` (a table; `runtime.enable` etc. as flat keys are read too), for the runtime checks
  the code lenses start (`workspace/executeCommand` only, never on their own):
  `enable` (bool, default true), `timeoutSeconds` (a positive number, default 300: the whole
  run, the script's start included), `steps` (a positive integer, default: the check's own,
  200 for overfit and 5 for the gradient scan).

Other keys (`interpreter`, `importStrategy`, ...) belong to the editor extension and are
ignored here. The extension adds `origins`: for each key, where its value was set ("user
settings", "workspace settings", the folder's settings), so that a problem names the place to
fix it. Bad values are dropped with a message, never fatal: a list keeps its good entries (a
`select` with none left is as if unset, so a typo never turns linting off).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pygls.uris import to_fs_path

from torchlint.config import CliOverrides, PathPattern, patterns_match
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


NOTIFICATIONS = ("off", "onError", "onWarning", "always")
Notifications = Literal["off", "onError", "onWarning", "always"]


@dataclass(frozen=True)
class ClientSettings:
    enable: bool = True
    run: RunMode = "onType"
    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] = ()
    # rule code -> "error" / "warning" / "info" / "information" / "hint"
    severity: Mapping[str, str] = field(default_factory=dict)
    runtime: RuntimeSettings = DEFAULT_RUNTIME
    extend_select: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    configuration: str | None = None
    show_syntax_errors: bool = True
    show_notifications: Notifications = "onWarning"
    project: bool = True  # follow calls into other project files (`--no-project` in lint.args)
    lint_args: tuple[str, ...] = ()  # as the client sent them, applied already (for to_json)

    @property
    def overrides(self) -> CliOverrides:
        config = Path(self.configuration) if self.configuration else None
        return CliOverrides(
            select=self.select, ignore=self.ignore, config=config, extend_select=self.extend_select
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "enable": self.enable,
            "run": self.run,
            "select": list(self.select) if self.select is not None else None,
            "extendSelect": list(self.extend_select),
            "ignore": list(self.ignore),
            "severity": dict(self.severity),
            "exclude": list(self.exclude),
            "configuration": self.configuration,
            "showSyntaxErrors": self.show_syntax_errors,
            "showNotifications": self.show_notifications,
            "project": self.project,
            "lint": {"args": list(self.lint_args)},
            "runtime": self.runtime.to_json(),
        }


DEFAULT_SETTINGS = ClientSettings()


@dataclass(frozen=True)
class Problem:
    """A setting the server could not use (in full or in part): its key and why."""

    key: str
    message: str

    def __str__(self) -> str:
        return f"`{self.key}`: {self.message}"


def _selectors(value: Any, key: str, problems: list[Problem]) -> tuple[str, ...] | None:
    """The rule selectors of a list setting; the unknown ones are named in one problem. None
    when the value is not a list at all."""
    if isinstance(value, str):  # a comma-separated string, as on the command line
        value = [part for part in value.split(",") if part.strip()]
    if not isinstance(value, list | tuple):
        problems.append(Problem(key, "must be a list of rule codes or names; ignored"))
        return None
    kept: list[str] = []
    unknown: list[str] = []
    for item in value:
        if not isinstance(item, str):
            unknown.append(repr(item))
            continue
        try:
            kept.extend(validate_selectors([item], key))
        except SelectorError:
            unknown.append(item.strip())
    if unknown:
        names = ", ".join(f"`{name}`" for name in unknown)
        verb = "matches" if len(unknown) == 1 else "match"
        rest = "the rest apply" if kept else "nothing else is listed there"
        if key == "select" and not kept:
            rest += ", so the project's selection applies"
        problems.append(
            Problem(
                key,
                f"{names} {verb} no rule (codes such as TL101, prefixes such as TL1, "
                f"names, or ALL); ignored, {rest}",
            )
        )
    return tuple(kept)


def _severity(value: Any, problems: list[Problem]) -> dict[str, str]:
    if not isinstance(value, Mapping):
        problems.append(
            Problem("severity", "must be a table of rule code or name to severity; ignored")
        )
        return {}
    result: dict[str, str] = {}
    unknown: list[str] = []
    for key, level in value.items():
        rule = lookup(str(key).strip())
        if rule is None:
            unknown.append(f"`{key}`")
            continue
        if not isinstance(level, str) or level.strip().lower() not in SEVERITIES:
            problems.append(
                Problem(
                    "severity",
                    f"`{key}`: {level!r} is not one of {', '.join(SEVERITIES)}; ignored",
                )
            )
            continue
        result[rule.code] = level.strip().lower()
    if unknown:
        verb = "is not a rule code or name" if len(unknown) == 1 else "are not rule codes or names"
        problems.append(Problem("severity", f"{', '.join(unknown)} {verb}; ignored"))
    return result


def _runtime(raw: Mapping[str, Any], problems: list[Problem]) -> RuntimeSettings:
    """The `runtime` table, or its keys spelled flat (`"runtime.enable": false`), as clients
    that do not nest dotted settings send them."""
    table: dict[str, Any] = {}
    nested = raw.get("runtime")
    if isinstance(nested, Mapping):
        table.update(nested)
    elif nested is not None:
        problems.append(Problem("runtime", "must be a table; using the default runtime settings"))
    for key, value in raw.items():
        if isinstance(key, str) and key.startswith("runtime."):
            table[key.removeprefix("runtime.")] = value
    enable = table.get("enable", True)
    if not isinstance(enable, bool):
        problems.append(Problem("runtime.enable", "must be true or false; using true"))
        enable = True
    timeout = table.get("timeoutSeconds", DEFAULT_RUNTIME_TIMEOUT_SECONDS)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0:
        problems.append(
            Problem(
                "runtime.timeoutSeconds",
                f"must be a positive number of seconds, got {timeout!r}; "
                f"using {DEFAULT_RUNTIME_TIMEOUT_SECONDS:g}",
            )
        )
        timeout = DEFAULT_RUNTIME_TIMEOUT_SECONDS
    steps = table.get("steps")
    if steps is not None and (isinstance(steps, bool) or not isinstance(steps, int) or steps < 1):
        problems.append(
            Problem(
                "runtime.steps",
                f"must be a positive whole number, got {steps!r}; using the check's default",
            )
        )
        steps = None
    return RuntimeSettings(enable, float(timeout), steps)


def _flag(raw: Mapping[str, Any], key: str, default: bool, problems: list[Problem]) -> bool:
    value = raw.get(key, default)
    if not isinstance(value, bool):
        problems.append(Problem(key, f"must be true or false; using {str(default).lower()}"))
        return default
    return value


def _patterns(value: Any, problems: list[Problem]) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        problems.append(Problem("exclude", "must be a list of path patterns; ignored"))
        return ()
    kept = []
    for pattern in value:
        try:
            PathPattern(pattern)
        except ValueError as exc:
            problems.append(Problem("exclude", f"`{pattern}`: {exc}; ignored"))
            continue
        kept.append(pattern)
    return tuple(kept)


# `torchlint check` options in `lint.args`: the rule lists, and what else means something for
# one file in an editor; the others are accepted by the command line but ignored here.
_LIST_OPTIONS = {"--select": "select", "--extend-select": "extendSelect", "--ignore": "ignore"}
_WITHOUT_MEANING = frozenset(
    {
        "--fix",
        "--unsafe-fixes",
        "--diff",
        "--exit-zero",
        "--force-exclude",
        "--exit-non-zero-on-fix",
        "--statistics",
        "--no-cache",
        "--verbose",
        "-v",
    }
)
_WITHOUT_MEANING_WITH_VALUE = frozenset({"--output-format", "--jobs"})


@dataclass
class LintArgs:
    """What `lint.args` says, to apply over the other settings."""

    args: tuple[str, ...] = ()
    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    config: str | None = None
    project: bool = True


def _lint_args(raw: Mapping[str, Any], problems: list[Problem]) -> LintArgs:
    """`lint.args` (or `lint: {args}`) read like `torchlint check`'s options."""
    value = raw.get("lint.args")
    if value is None and isinstance(raw.get("lint"), Mapping):
        value = raw["lint"].get("args")
    if value is None:
        return LintArgs()
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        problems.append(Problem("lint.args", "must be a list of strings; ignored"))
        return LintArgs()
    result = LintArgs(args=tuple(value))
    lists: dict[str, list[str]] = {key: [] for key in _LIST_OPTIONS.values()}
    selected = False
    unknown: list[str] = []
    ignored: list[str] = []
    tokens = [token.strip() for token in value if token.strip()]
    index = 0
    while index < len(tokens):
        token = tokens[index]
        index += 1
        option, has_value, inline = token.partition("=")
        takes_value = option in _LIST_OPTIONS or option in _WITHOUT_MEANING_WITH_VALUE
        if option == "--config":
            takes_value = True
        argument: str | None = inline if has_value else None
        if takes_value and argument is None:
            if index < len(tokens) and not tokens[index].startswith("-"):
                argument = tokens[index]
                index += 1
            else:
                problems.append(Problem("lint.args", f"`{option}` needs a value; ignored"))
                continue
        if option in _LIST_OPTIONS:
            key = _LIST_OPTIONS[option]
            lists[key].extend(_selectors(argument, "lint.args", problems) or ())
            selected = selected or key == "select"
        elif option == "--config":
            result.config = argument
        elif option == "--no-project" and not has_value:
            result.project = False
        elif option in _WITHOUT_MEANING or option in _WITHOUT_MEANING_WITH_VALUE:
            ignored.append(token if argument is None else f"{option} {argument}")
        elif option.startswith("-"):
            unknown.append(token)
        else:
            ignored.append(token)  # a path: the editor lints the document it shows
    if selected:
        result.select = tuple(lists["select"]) or None
    result.extend_select = tuple(lists["extendSelect"])
    result.ignore = tuple(lists["ignore"])
    if unknown:
        names = ", ".join(f"`{name}`" for name in unknown)
        problems.append(Problem("lint.args", f"{names}: not an option of `torchlint check`"))
    if ignored:
        names = ", ".join(f"`{name}`" for name in ignored)
        problems.append(
            Problem("lint.args", f"{names}: no meaning for one file in the editor; ignored")
        )
    return result


def parse_settings(raw: Any) -> tuple[ClientSettings, list[Problem]]:
    """Settings from what the client sent (None, a table, or junk), and the problems found."""
    problems: list[Problem] = []
    if raw is None:
        return DEFAULT_SETTINGS, problems
    if not isinstance(raw, Mapping):
        problems.append(Problem("torchlint", f"must be a table, got {type(raw).__name__}"))
        return DEFAULT_SETTINGS, problems
    enable = _flag(raw, "enable", True, problems)
    run: RunMode = "onType"
    raw_run = raw.get("run", "onType")
    if raw_run == "onSave":
        run = "onSave"
    elif raw_run != "onType":
        problems.append(
            Problem("run", f"must be `onType` or `onSave`, got {raw_run!r}; using onType")
        )
    select = None
    if raw.get("select") is not None:
        select = _selectors(raw["select"], "select", problems) or None
    extend = _selectors(raw.get("extendSelect") or [], "extendSelect", problems) or ()
    ignore = _selectors(raw.get("ignore") or [], "ignore", problems) or ()
    severity = _severity(raw.get("severity") or {}, problems)
    runtime = _runtime(raw, problems)
    configuration = raw.get("configuration")
    if configuration is not None and not isinstance(configuration, str):
        problems.append(
            Problem("configuration", "must be the path of a configuration file; ignored")
        )
        configuration = None
    notifications: Notifications = "onWarning"
    raw_notifications = raw.get("showNotifications", "onWarning")
    if raw_notifications in NOTIFICATIONS:
        notifications = raw_notifications
    else:
        problems.append(
            Problem(
                "showNotifications",
                f"must be one of {', '.join(NOTIFICATIONS)}, got {raw_notifications!r}; "
                "using onWarning",
            )
        )
    configuration = configuration.strip() or None if configuration else None
    exclude = _patterns(raw.get("exclude"), problems)
    show_syntax_errors = _flag(raw, "showSyntaxErrors", True, problems)
    args = _lint_args(raw, problems)  # as if typed after the settings above
    return (
        ClientSettings(
            enable=enable,
            run=run,
            select=args.select if args.select is not None else select,
            ignore=ignore + args.ignore,
            severity=severity,
            runtime=runtime,
            extend_select=extend + args.extend_select,
            exclude=exclude,
            configuration=args.config or configuration,
            show_syntax_errors=show_syntax_errors,
            show_notifications=notifications,
            project=args.project,
            lint_args=args.args,
        ),
        problems,
    )


_SHOWN: dict[str, frozenset[int]] = {
    "off": frozenset(),
    "onError": frozenset({1}),
    "onWarning": frozenset({1, 2}),
    "always": frozenset({1, 2, 3, 4}),
}


def shows(notifications: Notifications, kind: int) -> bool:
    """Whether a message of `kind` (LSP's MessageType: 1 error ... 4 log) pops up."""
    return int(kind) in _SHOWN.get(notifications, _SHOWN["onWarning"])


def editor_excludes(settings: ClientSettings, path: Path, root: Path) -> bool:
    """Whether the editor's `exclude` patterns (relative to the folder `root`) leave `path` out."""
    if not settings.exclude:
        return False
    try:
        parts = path.relative_to(root).parts
    except ValueError:
        parts = (path.name,)
    patterns = [PathPattern(pattern) for pattern in settings.exclude]
    return patterns_match(patterns, parts, False, ancestors=True)


def origin_of(raw: Any, key: str) -> str | None:
    """Where the client says the value of `key` was set (see the module docstring)."""
    origins = raw.get("origins") if isinstance(raw, Mapping) else None
    if not isinstance(origins, Mapping):
        return None
    found = origins.get(key.split(".")[0])
    return found if isinstance(found, str) else None


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
