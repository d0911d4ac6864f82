"""The registry of runtime checks and of their command-line options: one place says what each
check is, what it defaults to, which plugin runs it in the child, which module draws its
evidence, which of its verdicts mean pass, fail, inconclusive or not applicable, and which
options it takes. `torchlint run`'s argument parser is built from it (`add_run_arguments`).

Torch-free: the parent process (the CLI, the language server) reads it.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from typing import Any, Literal

Outcome = Literal["pass", "fail", "inconclusive", "not_applicable"]
OUTCOMES: tuple[Outcome, ...] = ("pass", "fail", "inconclusive", "not_applicable")

#: environment given to the script during a check (also reported in the envelope)
CHECK_ENVIRONMENT = {"WANDB_MODE": "disabled", "TORCHLINT_RUN": "1"}


@dataclass(frozen=True)
class CheckSpec:
    """One runtime check."""

    name: str
    #: what it answers, for people
    title: str
    #: optimizer steps it runs by default (overfit: its budget; profile: measured steps; fit:
    #: bounded by epochs and batches instead)
    default_steps: int
    #: the plugin that runs it in the child process, as "module:Class"
    plugin: str
    #: the module whose `render_evidence(payload, console, glyphs)` draws its evidence
    report: str
    #: its documentation page (docs/...)
    doc: str
    #: verdict -> outcome
    verdicts: dict[str, Outcome] = field(default_factory=dict)
    #: whether a script's `torchlint_setup()` can give it the model, data, loss and optimizer
    #: (the others follow the script's own loop only)
    accepts_setup: bool = False


CHECKS: dict[str, CheckSpec] = {
    spec.name: spec
    for spec in (
        CheckSpec(
            "overfit",
            "can the model memorise one batch?",
            1000,
            "torchlint.runtime.child.overfit:OverfitPlugin",
            "torchlint.runtime.report.overfit",
            "runtime.md#overfit-fit-one-batch",
            {
                "pass": "pass",
                "fail": "fail",
                "nan": "fail",
                "inconclusive": "inconclusive",
                "not_applicable": "not_applicable",
            },
            accepts_setup=True,
        ),
        CheckSpec(
            "grads",
            "does every parameter get a sound gradient?",
            5,
            "torchlint.runtime.child.grads:GradsPlugin",
            "torchlint.runtime.report.grads",
            "runtime.md#grads-gradient-scan",
            {
                "healthy": "pass",
                "problems": "fail",
                "inconclusive": "inconclusive",
                "not_applicable": "not_applicable",
            },
            accepts_setup=True,
        ),
        CheckSpec(
            "profile",
            "where does the training step's time go?",
            20,
            "torchlint.runtime.child.profile:ProfilePlugin",
            "torchlint.runtime.report.profile",
            "runtime-profile.md",
            {
                "ok": "pass",
                "hints": "pass",
                "inconclusive": "inconclusive",
                "not_applicable": "not_applicable",
            },
        ),
        CheckSpec(
            "fit",
            "what do the training and validation curves say?",
            0,
            "torchlint.runtime.child.fit:FitPlugin",
            "torchlint.runtime.report.fit",
            "runtime-fit.md",
            {
                "healthy": "pass",
                "overfitting": "fail",
                "underfitting": "fail",
                "nan": "fail",
                "inconclusive": "inconclusive",
                "not_applicable": "not_applicable",
            },
        ),
        CheckSpec(
            "lr-find",
            "which learning rate should the script use?",
            0,  # the sweep's length is chosen from the measured step cost (lr_find_sweep.py)
            "torchlint.runtime.child.lr_find:LrFindPlugin",
            "torchlint.runtime.report.lr_find",
            "runtime-lr-find.md",
            {
                "suggested": "pass",
                "no_suggestion": "inconclusive",
                "inconclusive": "inconclusive",
                "not_applicable": "not_applicable",
            },
        ),
    )
}

#: the verdict of a check stopped at its first step by a sanity check (a label out of range,
#: a loss that is not differentiable)
STOPPED_VERDICT = "stopped"


def outcome_of(check: str, verdict: str | None, errors: bool) -> Outcome | None:
    """The outcome a verdict stands for; `fail` whenever an error-level finding was made (a
    headline never says pass beside one), None for a check that did not complete."""
    if verdict is None:
        return None
    if verdict == STOPPED_VERDICT:
        return "fail"
    spec = CHECKS.get(check)
    outcome = spec.verdicts.get(verdict, "inconclusive") if spec is not None else "inconclusive"
    if errors and outcome in ("pass", "inconclusive", "not_applicable"):
        return "fail"
    return outcome


# ----------------------------------------------------------------------------------------------
# options


@dataclass(frozen=True)
class RunOption:
    """One option of `torchlint run`. `checks` are the checks it applies to (empty: all);
    `key` is the name the child's plugin reads it under (None: the launcher's own option)."""

    flag: str
    help: str
    checks: tuple[str, ...] = ()
    key: str | None = None
    kwargs: dict[str, Any] = field(default_factory=dict)

    @property
    def attribute(self) -> str:
        return self.flag.removeprefix("--").replace("-", "_")


OPTIONS: tuple[RunOption, ...] = (
    RunOption(
        "--steps",
        "optimizer steps: overfit's budget (default 1000; it stops earlier once the loss "
        "converges or plateaus), grads 5, profile 20 measured, lr-find 100 to 1000 chosen "
        "from the step's CPU cost",
        kwargs={"type": int, "default": None, "metavar": "N"},
    ),
    RunOption(
        "--time-budget",
        "overfit: seconds of training after which it stops and judges what it has "
        "(default: 90, or what 100 steps of the measured step cost need; never past "
        "--timeout)",
        ("overfit",),
        "time_budget",
        {"type": float, "default": None, "metavar": "SECONDS"},
    ),
    RunOption(
        "--nproc-per-node",
        "grads and profile: launch the script through torchrun with N processes, check "
        "every rank and compare them (skew between ranks, gradients that differ after the "
        "all-reduce)",
        ("grads", "profile"),
        None,
        {"type": int, "default": None, "metavar": "N"},
    ),
    RunOption(
        "--warmup",
        "profile: steps discarded before measuring (default: 5; at least 1, since a step is "
        "timed from the end of the one before)",
        ("profile",),
        "warmup",
        {"type": int, "default": None, "metavar": "N"},
    ),
    RunOption(
        "--sync",
        "profile on CUDA: CUDA events with one synchronisation per step (auto), or a "
        "synchronisation at every stage boundary (per-stage, a diagnostic mode)",
        ("profile",),
        "sync",
        {"choices": ("auto", "per-stage"), "default": "auto"},
    ),
    RunOption(
        "--trace",
        "profile: also write a torch.profiler Chrome trace of a few steps to FILE",
        ("profile",),
        "trace",
        {"metavar": "FILE"},
    ),
    RunOption(
        "--epochs",
        "fit: epochs to run (default: 5)",
        ("fit",),
        "epochs",
        {"type": int, "default": None, "metavar": "K"},
    ),
    RunOption(
        "--limit-batches",
        "fit and profile: batches per pass over each loader, so short epochs reach the "
        "script's validation (fit default: 20)",
        ("fit", "profile"),
        "limit_batches",
        {"type": int, "default": None, "metavar": "N"},
    ),
    RunOption(
        "--plot",
        "fit and lr-find: also draw the curves into FILE (.svg)",
        ("fit", "lr-find"),
        "plot",
        {"metavar": "FILE"},
    ),
    RunOption(
        "--detect-anomaly",
        "fit: run under torch.autograd.detect_anomaly, to name the operation that first "
        "produces NaN (slower; use after a fit reported NaN)",
        ("fit",),
        "detect_anomaly",
        {"action": "store_true", "default": None},
    ),
    RunOption(
        "--lr-min",
        "lr-find: first learning rate (default: 1e-7)",
        ("lr-find",),
        "lr_min",
        {"type": float, "default": None},
    ),
    RunOption(
        "--lr-max",
        "lr-find: last learning rate (default: 10)",
        ("lr-find",),
        "lr_max",
        {"type": float, "default": None},
    ),
    RunOption(
        "--timeout",
        "wall-clock limit; the script and everything it started are killed after it (default: 300)",
        kwargs={"type": float, "default": 300.0, "metavar": "SECONDS"},
    ),
    RunOption(
        "--output-format",
        "a report for people (full) or the JSON envelope (json)",
        kwargs={"choices": ("full", "json"), "default": "full"},
    ),
    RunOption("--output", "also write the JSON envelope to FILE", kwargs={"metavar": "FILE"}),
    RunOption(
        "--show-output",
        "pass the script's own output through (default: kept, shown on errors)",
        kwargs={"action": "store_true"},
    ),
    RunOption(
        "--python",
        "interpreter that runs the script (default: the one running torchlint)",
        kwargs={"metavar": "PYTHON", "default": None},
    ),
    RunOption(
        "--keep-outputs",
        "copy every file the run wrote into DIR (a new or empty folder); by default they are "
        "removed with the run's scratch folder, and no file you had is ever changed",
        kwargs={"metavar": "DIR", "default": None},
    ),
    RunOption(
        "--isolation",
        "how the script's writes are kept off your files: overlay mounts where the system "
        "allows them, else redirection inside the script's Python processes (auto); insist "
        "on overlay mounts; or use the redirection alone",
        kwargs={"choices": ("auto", "overlay", "redirect"), "default": "auto"},
    ),
)


def add_run_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments of `torchlint run`, from the registries."""
    names = tuple(CHECKS)
    parser.add_argument(
        "check",
        choices=names,
        help="; ".join(f"{spec.name}: {spec.title}" for spec in CHECKS.values()),
    )
    parser.add_argument("script", metavar="SCRIPT", help="the training script, as you run it")
    for option in OPTIONS:
        parser.add_argument(option.flag, help=option.help, **option.kwargs)
