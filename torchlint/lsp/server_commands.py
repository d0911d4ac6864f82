"""The commands (`workspace/executeCommand`): the lenses' runtime checks (run by
`torchlint.lsp.runtime_runs`) and the debug information (`torchlint.lsp.commands`)."""

from __future__ import annotations

import asyncio
import traceback
from collections.abc import Sequence
from typing import Any

from lsprotocol import types

from torchlint.lsp.commands import debug_information, format_debug_information
from torchlint.lsp.server_core import ServerCore


class Commands(ServerCore):
    async def runtime_command(self, command: str, arguments: Sequence[Any]) -> dict[str, Any]:
        """A lens's runtime check (see `torchlint.lsp.runtime_runs`): the run's envelope, or
        why none started."""
        try:
            return await self.runtime.execute(command, arguments)
        except asyncio.CancelledError:
            raise
        except Exception:
            message = f"{command} failed inside the server:\n{traceback.format_exc()}"
            self.log(message, types.MessageType.Error)
            self.window_show_message(
                types.ShowMessageParams(
                    type=types.MessageType.Error,
                    message=f"{command} failed inside the server (see the torchlint log)",
                )
            )
            return {"status": "failed", "command": command, "message": message}

    async def debug_info(self, arguments: Sequence[Any]) -> dict[str, Any]:
        uri = arguments[0] if arguments and isinstance(arguments[0], str) else None
        context = self.document_context(uri) if uri else None
        info = await self.in_thread(
            lambda: debug_information(
                parser=self.parsers.name,
                position_encoding=self.encoding,
                open_documents=len(self.documents),
                folders=self.folder_uris(),
                global_settings=self.settings.global_settings,
                document=context,
            )
        )
        self.log(format_debug_information(info))
        return info
