"""Shared by the CUDA suite: run a check of a script of scripts/ and read its envelope back
into the typed model (and through the JSON Schema where jsonschema is installed); the figures
the suite measured, written to $TORCHLINT_GPU_FIGURES for benchmarks/README.md."""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path
from typing import Any

from torchlint.runtime.envelope_model import Envelope
from torchlint.runtime.launcher import RunRequest, run_check
from torchlint.runtime.typed import to_json

SCRIPTS = Path(__file__).parent / "scripts"
FIGURES: dict[str, Any] = {}


def line_of(script: str, marker: str) -> int:
    lines = (SCRIPTS / f"{script}.py").read_text().splitlines()
    found = [i for i, text in enumerate(lines, 1) if text.rstrip().endswith(f"# line: {marker}")]
    assert len(found) == 1, (script, marker, found)
    return found[0]


def checked(envelope: dict[str, Any]) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(json.dumps(envelope, allow_nan=False))
    if importlib.util.find_spec("jsonschema") is not None:
        from envelope_schema import validate_envelope

        return validate_envelope(loaded)
    assert to_json(Envelope.read(loaded)) == loaded
    return loaded


def run(check: str, script: str, *args: str, steps: int = 20, **options: Any) -> dict[str, Any]:
    request = RunRequest(
        check,
        SCRIPTS / f"{script}.py",
        args=list(args),
        steps=steps,
        timeout_s=180,
        options=options,
    )
    return checked(run_check(request))


def by_code(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {d["code"]: d for d in result["diagnostics"]}


def write_figures() -> None:
    target = os.environ.get("TORCHLINT_GPU_FIGURES")
    if target and FIGURES:
        Path(target).write_text(json.dumps(FIGURES, indent=1, sort_keys=True) + "\n")
