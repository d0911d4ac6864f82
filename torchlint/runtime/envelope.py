"""The envelope as JSON data: its skeleton, its `error` object, finite floats, plain text.

This module never imports torch, so a report can be read (or an error envelope written) on a
machine without it. Every check serialises to one envelope::

    {"schema_version": 2, "check": "overfit" | "grads",
     "status": "completed" | "capture_failed" | "error" | "timeout",
     "verdict": ..., "summary": "<one line>",
     "script": ..., "argv": [...], "duration_s": ..., "isolation": {...},
     "environment": {"torch", "device", "dtype", "batch_size", "model_mode", "autocast",
                     "grad_scaler", "loader"},
     "captured": {...}, "diagnostics": [...], "error": {...} | null,
     "payload": {...check-specific...}}

The explicit API fills what it knows (`script`, `captured` and `error` stay null); the launcher
(`torchlint run`) fills the rest. `torchlint/runtime/schema.json` is the JSON Schema.

Floats are finite or ``null``: a NaN or infinite loss or norm becomes ``null`` in the JSON.
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from torchlint.runtime.results import Environment

SCHEMA_VERSION = 3


def finite_or_none(value: float | None) -> float | None:
    """`value` when it is a finite float, else None (JSON has no NaN or infinity)."""
    if value is None or not math.isfinite(value):
        return None
    return float(value)


def envelope(
    check: str,
    status: str,
    verdict: str | None,
    summary: str,
    environment: Environment | None,
    payload: dict[str, Any],
) -> dict[str, Any]:
    from torchlint.runtime.checks import outcome_of

    return {
        "schema_version": SCHEMA_VERSION,
        "check": check,
        "status": status,
        "verdict": verdict,
        "outcome": outcome_of(check, verdict, False) if status == "completed" else None,
        "reason": None,
        "summary": summary,
        "script": None,
        "argv": [],
        "duration_s": None,
        "isolation": None,
        "environment": environment.to_json() if environment is not None else None,
        "captured": None,
        "diagnostics": [],
        "error": None,
        "payload": payload,
        "timing": None,
    }


def error_info(
    kind: str,
    message: str,
    site: dict[str, Any] | None = None,
    exit_code: int | None = None,
    output_tail: list[str] | None = None,
) -> dict[str, Any]:
    """The envelope's `error` object: what went wrong (`kind`: exception, crash, exit, timeout,
    out_of_memory, killed, internal, ...), where in the user's code when known, the child's exit
    status, and the last lines the script printed."""
    return {
        "kind": kind,
        "message": plain_text(message),
        "site": site,
        "exit_code": exit_code,
        "output_tail": [plain_text(line) for line in output_tail or []],
    }


#: terminal control sequences (colours, cursor moves, OSC titles and links)
_ESCAPES = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")


def plain_text(text: str) -> str:
    """`text` without terminal escape sequences (a script's coloured tracebacks and progress
    bars) and without other control characters but tabs."""
    cleaned = _ESCAPES.sub("", text)
    return "".join(c for c in cleaned if c >= " " or c in "\t\n")
