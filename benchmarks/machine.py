"""What a benchmark result was measured on: shared by the benchmark scripts."""

from __future__ import annotations

import os
import platform
from importlib.metadata import PackageNotFoundError, version
from typing import Any


def package_version(dist: str) -> str:
    try:
        return version(dist)
    except PackageNotFoundError:
        return "?"


def describe(
    cpus: int | None = None, load_before: tuple[float, ...] | None = None
) -> dict[str, Any]:
    """Python, libcst and torchlint versions, CPUs, and the load average (before, when given,
    and now)."""
    info: dict[str, Any] = {
        "python": platform.python_version(),
        "libcst": package_version("libcst"),
        "torchlint": package_version("torchlint"),
        "cpus": cpus if cpus is not None else os.cpu_count(),
    }
    if load_before is not None:
        info["load_before"] = [round(x, 2) for x in load_before]
    info["load_after"] = [round(x, 2) for x in os.getloadavg()]
    return info
