"""The server's `workspace/executeCommand` commands that are not tied to a feature: the runtime
checks' titles and the debug information. The runtime checks themselves (overfit one batch,
gradient scan, profile a step) run in `torchlint.lsp.runtime_runs`."""

from __future__ import annotations

import platform
import sys
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from torchlint import __version__
from torchlint.config import ConfigError, ConfigResolver
from torchlint.lsp.lenses import GRADS, OVERFIT, PROFILE
from torchlint.lsp.settings import ClientSettings
from torchlint.selection import RuleSelection

SHOW_DEBUG_INFORMATION = "torchlint.showDebugInformation"

RUNTIME_TITLES = {
    OVERFIT: "Overfit one batch",
    GRADS: "Gradient scan",
    PROFILE: "Profile step",
}


def _package_version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


@dataclass(frozen=True)
class DocumentContext:
    """What the debug information says about one document."""

    uri: str
    path: Path  # the file, or a stand-in inside its folder for an unsaved document
    root: Path  # where the configuration search starts from (the workspace folder)
    settings: ClientSettings


def debug_information(
    *,
    parser: str,
    position_encoding: str,
    open_documents: int,
    folders: list[str],
    global_settings: ClientSettings,
    document: DocumentContext | None,
) -> dict[str, Any]:
    """The facts a bug report needs, as JSON."""
    settings = document.settings if document is not None else global_settings
    info: dict[str, Any] = {
        "version": __version__,
        "python": sys.executable,
        "pythonVersion": platform.python_version(),
        "pygls": _package_version("pygls"),
        "lsprotocol": _package_version("lsprotocol"),
        "libcst": _package_version("libcst"),
        "parser": parser,
        "positionEncoding": position_encoding,
        "workspaceFolders": folders,
        "openDocuments": open_documents,
        "settings": settings.to_json(),
        "document": None,
        "configFile": None,
        "configError": None,
        "rulesEnabled": None,
        "excluded": False,
    }
    if document is None:
        overrides = settings.overrides
        selection = RuleSelection(overrides.select, overrides.ignore)
        info["rulesEnabled"] = [rule.code for rule in selection.rules()]
    else:
        info["document"] = document.uri
        try:
            resolver = ConfigResolver(settings.overrides, cwd=document.root)
            info["excluded"] = resolver.is_excluded(document.path, False, ancestors=True)
            config = resolver.config_for_dir(document.path.parent)
            selection = config.selection(document.path, settings.overrides)
            info["configFile"] = str(config.path) if config.path is not None else None
            info["rulesEnabled"] = [rule.code for rule in selection.rules()]
        except ConfigError as exc:
            info["configError"] = str(exc)
    return info


def format_debug_information(info: dict[str, Any]) -> str:
    lines = ["torchlint debug information:"]
    for key, value in info.items():
        if isinstance(value, list):
            value = ", ".join(str(item) for item in value) or "(none)"
        lines.append(f"  {key}: {value}")
    return "\n".join(lines)
