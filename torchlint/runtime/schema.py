"""The JSON Schema of the runtime envelope, generated from the typed model (envelope_model.py)
and the check registry (checks.py):
`python -m torchlint.runtime.schema > torchlint/runtime/schema.json`. A test checks that the
shipped schema.json is what this generates."""

from __future__ import annotations

import json
import sys
from typing import Any

from torchlint.runtime.checks import CHECKS, STOPPED_VERDICT
from torchlint.runtime.envelope import SCHEMA_VERSION
from torchlint.runtime.envelope_model import Envelope
from torchlint.runtime.payloads import PAYLOADS, CaptureFailedPayload, EmptyPayload, ErrorPayload
from torchlint.runtime.typed import SchemaBuilder


def generate() -> dict[str, Any]:
    builder = SchemaBuilder()
    builder.of(Envelope)
    for model in (*PAYLOADS.values(), CaptureFailedPayload, ErrorPayload, EmptyPayload):
        builder.of(model)
    envelope = builder.defs.pop("Envelope")
    properties = envelope["properties"]
    properties["schema_version"] = {"const": SCHEMA_VERSION}
    verdicts = sorted({v for spec in CHECKS.values() for v in spec.verdicts} | {STOPPED_VERDICT})
    properties["verdict"] = {"enum": [*verdicts, None]}
    properties["summary"] = {"type": "string", "minLength": 1}
    conditions: list[dict[str, Any]] = []
    for name, spec in CHECKS.items():
        payload = PAYLOADS[name].__name__
        conditions.append(
            {
                "if": {"properties": {"status": {"const": "completed"}, "check": {"const": name}}},
                "then": {
                    "properties": {
                        "verdict": {"enum": [*spec.verdicts, STOPPED_VERDICT]},
                        "outcome": {"enum": ["pass", "fail", "inconclusive", "not_applicable"]},
                        "payload": {
                            "anyOf": [
                                {"$ref": f"#/$defs/{payload}"},
                                {"$ref": "#/$defs/EmptyPayload"},
                            ]
                        },
                    }
                },
            }
        )
    for name in CHECKS:
        conditions.append(
            {
                "if": {
                    "properties": {
                        "status": {"enum": ["error", "timeout"]},
                        "check": {"const": name},
                    }
                },
                "then": {
                    "properties": {
                        "payload": {
                            "anyOf": [
                                {"$ref": f"#/$defs/{PAYLOADS[name].__name__}"},
                                {"$ref": "#/$defs/ErrorPayload"},
                                {"$ref": "#/$defs/EmptyPayload"},
                            ]
                        }
                    }
                },
            }
        )
    conditions += [
        {
            "if": {"properties": {"status": {"const": "capture_failed"}}},
            "then": {
                "properties": {
                    "verdict": {"const": None},
                    "outcome": {"const": None},
                    "payload": {"$ref": "#/$defs/CaptureFailedPayload"},
                }
            },
        },
        {
            "if": {"properties": {"status": {"enum": ["error", "timeout"]}}},
            "then": {
                "properties": {
                    "verdict": {"const": None},
                    "outcome": {"const": None},
                    "error": {"$ref": "#/$defs/ErrorInfo"},
                }
            },
        },
    ]
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"https://torchlint.dev/schemas/runtime-{SCHEMA_VERSION}.json",
        "title": "torchlint runtime check result",
        "description": "One envelope per runtime check (torchlint run CHECK, or the explicit "
        "API's to_json()). Generated from the types of torchlint/runtime/envelope_model.py by "
        "`python -m torchlint.runtime.schema`; documented in docs/runtime.md.",
        **envelope,
        "allOf": conditions,
        "$defs": dict(sorted(builder.defs.items())),
    }


def text() -> str:
    return json.dumps(generate(), indent=1) + "\n"


if __name__ == "__main__":
    sys.stdout.write(text())
