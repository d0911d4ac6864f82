"""Patching a module right after it is imported: a `sys.meta_path` finder that finds nothing
itself, but wraps the `exec_module` of the loader another finder returns for the modules it
watches. Used by the run's file isolation (native writers, sandbox/native.py) and by the child's
framework support (child/frameworks.py). Torch-free."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from typing import Any

Patch = Callable[[str, Any], None]


class PostImport:
    """Calls `patch(name, module)` right after a module named in `names` is executed; a patch
    that fails prints why and never breaks the user's import."""

    def __init__(self, names: Any, patch: Patch, what: str = "patch") -> None:
        self.names = names
        self.patch = patch
        self.what = what
        self._busy: set[str] = set()

    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        if name not in self.names or name in self._busy:
            return None
        self._busy.add(name)
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            return None
        finally:
            self._busy.discard(name)
        loader = getattr(spec, "loader", None) if spec is not None else None
        exec_module = getattr(loader, "exec_module", None)
        if spec is None or exec_module is None:
            return None
        patch, what = self.patch, self.what

        def exec_and_patch(module: Any) -> None:
            exec_module(module)
            try:
                patch(name, module)
            except Exception as exc:  # never break the user's import
                print(f"torchlint: could not {what} {name}: {exc!r}", file=sys.stderr)

        try:
            setattr(loader, "exec_module", exec_and_patch)  # noqa: B010 (this module's own loader)
        except (AttributeError, TypeError):
            return None
        return spec
