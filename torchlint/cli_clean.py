"""`torchlint clean`: remove the cache folders under the current directory."""

from __future__ import annotations

import argparse
from pathlib import Path

from torchlint.cache import CACHE_DIR_NAME, find_cache_dirs, remove_cache_dir
from torchlint.cli_output import _error
from torchlint.discovery import display_path


def cmd_clean(args: argparse.Namespace) -> int:
    cwd = Path.cwd()
    failed = False
    removed = 0
    for folder in find_cache_dirs(cwd):
        try:
            remove_cache_dir(folder)
        except OSError as exc:
            _error(f"cannot remove {display_path(folder)}: {exc.strerror or exc}")
            failed = True
            continue
        removed += 1
        print(f"Removed {display_path(folder)}")
    if not removed and not failed:
        print(f"Nothing to clean: no {CACHE_DIR_NAME} folder under {display_path(cwd)}")
    return 2 if failed else 0
