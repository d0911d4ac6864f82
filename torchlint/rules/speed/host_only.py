"""Whether the code around a file keeps every tensor on the host: neither the file nor the
project files it imports or that import it spell a device, an accelerator or a framework that
places tensors for the user. A host read there is no device sync."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

from torchlint.project.neighbours import imported_files, importing_files
from torchlint.rules.base import RuleContext

# Any of these in a file's text may put a tensor on a device: `.to(...)`, `.cuda()`,
# `device=`, `set_default_device`, a framework's trainer or launcher.
_DEVICE_TEXT = re.compile(
    rb"cuda|device|\.to\(|\bxla\b|\bmps\b|gpu|\bnpu\b|\bhpu\b|accelerat|lightning|fabric"
    rb"|deepspeed|trainer|\bddp\b|fsdp|horovod|\bhvd\b|distributed",
    re.IGNORECASE,
)

# Libraries that never move a tensor to a device on their own: a file analysed without its
# project may import these (and the standard library) and still be known to stay on the host.
_HOST_LIBRARIES = frozenset(
    {"torch", "numpy", "scipy", "pandas", "matplotlib", "seaborn", "gym", "gymnasium", "tqdm",
     "sklearn", "PIL", "yaml", "h5py"}
)  # fmt: skip


def host_only(ctx: RuleContext) -> bool:
    """The file's code can only see host tensors (memoized per file)."""
    found = ctx.memo.get("host-only")
    if not isinstance(found, bool):
        found = _host_only(ctx)
        ctx.memo["host-only"] = found
    return found


def _host_only(ctx: RuleContext) -> bool:
    if _DEVICE_TEXT.search(ctx.facts.parsed.text.encode("utf-8", "replace")):
        return False
    if ctx.project is None:
        return all(
            not target.startswith(".") and _is_host_library(target.split(".", 1)[0])
            for target in ctx.facts.imports.aliases.values()
        )
    path = Path(os.path.abspath(ctx.filename))
    imported = imported_files(ctx.project, path)
    if imported is None:
        return False
    for other in [*imported, *importing_files(ctx.project, path)]:
        source = ctx.project.source(other)
        if source is None or _DEVICE_TEXT.search(source[0]):
            return False
    return True


def _is_host_library(top: str) -> bool:
    return top in _HOST_LIBRARIES or top in sys.stdlib_module_names
