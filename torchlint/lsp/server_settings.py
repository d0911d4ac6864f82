"""The server's settings: pulled from the client (`workspace/configuration`) for every
workspace folder after `initialized`, again on `workspace/didChangeConfiguration` and when the
folders change (then every open document is linted again), or taken from what a client that
cannot be asked pushed; their problems logged or shown once per pull. What the settings are
and how they are read is `torchlint.lsp.settings`."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from lsprotocol import types

from torchlint.lsp.server_core import ServerCore
from torchlint.lsp.settings import ClientSettings, SettingsStore, origin_of, parse_settings, shows

SECTION = "torchlint"
CONFIGURATION_TIMEOUT_SECONDS = 10.0
GLOBAL_SCOPE = "the settings outside every workspace folder"


class ServerSettings(ServerCore):
    def _supports_pull(self) -> bool:
        capabilities = self.client_capabilities
        return bool(
            capabilities and capabilities.workspace and capabilities.workspace.configuration
        )

    async def pull_settings(self, pushed: Any = None) -> bool:
        """Ask the client for the settings (or use what it pushed when it cannot be asked);
        False when a newer pull overtook this one."""
        self._pull_generation += 1
        generation = self._pull_generation
        folders = self.folder_uris()
        raw_global: Any = pushed
        raw_folders: dict[str, Any] = {}
        if self._supports_pull():
            items = [types.ConfigurationItem(section=SECTION)] + [
                types.ConfigurationItem(section=SECTION, scope_uri=folder) for folder in folders
            ]
            try:
                answer = await asyncio.wait_for(
                    self.workspace_configuration_async(types.ConfigurationParams(items=items)),
                    CONFIGURATION_TIMEOUT_SECONDS,
                )
            except Exception as exc:
                self.log(
                    f"workspace/configuration failed ({exc!r}); using the default settings",
                    types.MessageType.Warning,
                )
                answer = []
            answer = list(answer or [])
            raw_global = answer[0] if answer else None
            raw_folders = {
                folder: answer[index + 1]
                for index, folder in enumerate(folders)
                if index + 1 < len(answer)
            }
        if generation != self._pull_generation:
            return False
        self._announced.clear()
        store = SettingsStore()
        shown: list[str] = []  # problems of scopes whose `showNotifications` pops warnings up
        logged: list[str] = []
        scopes = [(GLOBAL_SCOPE, raw_global, None)] + [
            (f"the settings of {folder}", raw_folders.get(folder, raw_global), folder)
            for folder in folders
        ]
        for scope, raw, folder in scopes:
            settings, problems = self._parse(scope, raw)
            if folder is None:
                store.global_settings = settings
            else:
                store.folders[folder] = settings
            warn = shows(settings.show_notifications, types.MessageType.Warning)
            (shown if warn else logged).extend(problems)
        self.settings = store
        self.log(f"settings: {json.dumps(store.global_settings.to_json())}")
        for folder, settings in store.folders.items():
            if settings != store.global_settings:
                self.log(f"settings for {folder}: {json.dumps(settings.to_json())}")
        # One message for the whole pull: a problem of the user settings is in every folder's
        # answer too, but it is named once, with the place to fix it.
        for problem in dict.fromkeys(logged):
            if problem not in shown:
                self.log(f"torchlint settings: {problem}", types.MessageType.Warning)
        if shown:
            message = "torchlint settings: " + "; ".join(dict.fromkeys(shown))
            self._announced.add(message)
            self.log(message, types.MessageType.Warning)
            self.window_show_message(
                types.ShowMessageParams(type=types.MessageType.Warning, message=message)
            )
        self.settings_ready.set()
        return True

    def _parse(self, scope: str, raw: Any) -> tuple[ClientSettings, list[str]]:
        settings, found = parse_settings(raw)
        problems = [
            f"torchlint.{problem.key} ({origin_of(raw, problem.key) or scope}): {problem.message}"
            for problem in found
        ]
        return settings, problems

    async def settings_changed(self, pushed: Any = None) -> None:
        if await self.pull_settings(pushed):
            for uri in list(self.documents):
                self.schedule(uri, delay=0.0)
            for uri in list(self.notebooks):
                self.schedule_notebook(uri, delay=0.0)


def pushed_settings(value: Any) -> Any:
    """The `torchlint` settings inside what a client pushed (initialization options or a
    `didChangeConfiguration` payload): `{"torchlint": {...}}`, `{"settings": {...}}` or the
    table itself. Used only by clients that cannot answer `workspace/configuration`."""
    if not isinstance(value, dict):
        return None
    for key in (SECTION, "settings"):
        if isinstance(value.get(key), dict):
            return value[key]
    return value
