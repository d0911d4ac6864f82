"""Validation of runtime-check envelopes against the JSON Schema shipped in the package, and
against the typed model it is generated from."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

from jsonschema import Draft202012Validator

from torchlint.runtime.envelope_model import Envelope
from torchlint.runtime.typed import to_json


@cache
def validator() -> Draft202012Validator:
    text = resources.files("torchlint.runtime").joinpath("schema.json").read_text("utf-8")
    schema = json.loads(text)
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def validate_envelope(envelope: dict[str, Any]) -> dict[str, Any]:
    """The envelope after a strict JSON round trip (no NaN), checked against the schema and
    read into the typed model, which writes it back unchanged."""
    loaded: dict[str, Any] = json.loads(json.dumps(envelope, allow_nan=False))
    errors = sorted(validator().iter_errors(loaded), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors[:10])
    typed = Envelope.read(loaded)
    assert to_json(typed) == loaded, "the typed model does not write the envelope back as read"
    return loaded
