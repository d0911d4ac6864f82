"""The typed envelope's parts but the payload: sites, isolation, captures, errors, timing."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Severity = Literal["error", "warning", "info"]


def _doc(text: str, **more: Any) -> dict[str, Any]:
    return {"doc": text, **more}


@dataclass
class SiteModel:
    """A line of the user's code."""

    filename: str
    line: int = field(metadata={"minimum": 1})
    function: str


@dataclass
class LoaderSettings:
    batch_size: int | None
    num_workers: int
    pin_memory: bool
    persistent_workers: bool
    prefetch_factor: int | None
    drop_last: bool


@dataclass
class EnvironmentModel:
    """Where the check ran (see `Environment`)."""

    torch: str
    device: str
    dtype: str
    batch_size: int | None
    model_mode: Literal["train", "eval"]
    autocast: str | None
    grad_scaler: bool | None
    loader: LoaderSettings | None


@dataclass
class WrittenFile:
    path: str
    bytes: int
    existed: bool


@dataclass
class RunFiles:
    """What the run wrote and where it went (the user's files are never changed)."""

    mechanism: Literal["overlay", "redirect"]
    protected: list[str]
    reason: str | None = field(metadata=_doc("why the overlay was not used"))
    written: list[WrittenFile]
    written_count: int
    deleted: list[str]
    deleted_count: int
    kept_in: str | None


@dataclass
class Isolation:
    process: Literal["child"]
    timeout_s: float
    working_directory: str
    environment: dict[str, str]
    files: RunFiles | None = field(
        default=None, metadata={"optional": True, "doc": "what the run wrote (the launcher)"}
    )


@dataclass
class CapturedModel:
    class_: str = field(metadata={"json": "class"})
    parameters: int
    trainable: int
    forward_site: SiteModel | None
    forwards: int


@dataclass
class CapturedOptimizer:
    class_: str = field(metadata={"json": "class", "doc": "the class, or 'manual update'"})
    lr: list[float | None]
    parameters: int
    steps: int
    primary: bool
    site: SiteModel | None
    step_site: SiteModel | None


@dataclass
class CapturedLoader:
    role: Literal["train", "other"]
    batches: int
    settings: LoaderSettings
    site: SiteModel | None
    iter_site: SiteModel | None


@dataclass
class CapturedLoss:
    function: str
    site: SiteModel | None
    input_shape: list[int] | None
    target_shape: list[int] | None
    num_classes: int | None
    reduction: str | None
    value: float | None


@dataclass
class CapturedBackward:
    calls: int
    site: SiteModel | None


@dataclass
class Captured:
    """The objects of the training step the launcher found, with their lines."""

    models: list[CapturedModel]
    optimizers: list[CapturedOptimizer]
    loaders: list[CapturedLoader]
    losses: list[CapturedLoss]
    backward: CapturedBackward


@dataclass
class Diagnostic:
    """A finding at a line of the user's code. `message` is the whole text (what was found,
    then what to do); `advice` is what to do, alone."""

    code: str
    name: str
    severity: Severity
    message: str
    advice: str | None
    filename: str | None
    line: int | None
    evidence: dict[str, Any]


@dataclass
class ErrorInfo:
    kind: str = field(
        metadata=_doc(
            "crash, exit, timeout, out_of_memory, killed, setup, cancelled, internal, "
            "torchlint, exception"
        )
    )
    message: str
    site: SiteModel | None
    exit_code: int | None
    output_tail: list[str]


@dataclass
class Timing:
    """The primary optimizer's median step under the check (after 5 warm-up steps)."""

    step_ms_median: float
    steps: int


@dataclass
class FrameworkUse:
    """A framework whose Trainer ran the script's loop, with torchlint's callback."""

    integration: str
    note: str
