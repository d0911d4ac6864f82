"""The typed envelope: what every renderer reads, and what schema.json is generated from."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from torchlint.runtime.envelope_parts import (
    Captured,
    Diagnostic,
    EnvironmentModel,
    ErrorInfo,
    FrameworkUse,
    Isolation,
    Timing,
)
from torchlint.runtime.payloads import payload_type

Status = Literal["completed", "capture_failed", "error", "timeout"]
OutcomeValue = Literal["pass", "fail", "inconclusive", "not_applicable"]


@dataclass
class Envelope:
    """The result of one runtime check. `verdict` is the check's own word; `outcome` one of
    four, the same for every check (a check with an error-level finding never passes);
    `reason` the cause of a fail, what would decide an inconclusive result, or why the check
    does not apply."""

    schema_version: int
    check: Literal["overfit", "grads", "profile", "fit", "lr-find"]
    status: Status
    verdict: str | None
    outcome: OutcomeValue | None
    reason: str | None
    summary: str
    script: str | None
    argv: list[str]
    duration_s: float | None
    isolation: Isolation | None
    environment: EnvironmentModel | None
    captured: Captured | None
    diagnostics: list[Diagnostic]
    error: ErrorInfo | None
    payload: Any
    timing: Timing | None
    frameworks: list[FrameworkUse] | None = field(
        default=None, metadata={"optional": True, "doc": "the Trainers that ran the loop"}
    )

    @classmethod
    def read(cls, data: dict[str, Any]) -> Envelope:
        """An envelope from its JSON, its payload read as the check's (ModelError when it does
        not fit)."""
        from torchlint.runtime.typed import from_json

        envelope = from_json(cls, data)
        envelope.payload = from_json(
            payload_type(envelope.check, envelope.status, data["payload"]),
            data["payload"],
            "$.payload",
        )
        return envelope
