"""Starts the torchlint language server from the copy the extension bundles (see package.py).

Run by the user's interpreter as `python bundled/tool/lsp_server.py`: this folder (torchlint
alone) and `../libs` (its dependencies) go first on `sys.path`, ahead of whatever the
interpreter has installed, in this process only. The runtime checks' child processes get this
folder on PYTHONPATH (the launcher adds torchlint's own folder) and nothing of `../libs`, so the
user's script runs with its own packages.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "libs")]

from torchlint.lsp.server import main  # noqa: E402 - after the path is set

if __name__ == "__main__":
    raise SystemExit(main())
