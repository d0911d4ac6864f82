"""The registry of runtime diagnostic codes: every `TLR` code a runtime check can report, with
its kebab-case name, its default severity, the check that reports it, what it means and the
line it points at. A finding is made from its code (`child.captured.Finding`), so a code
missing here fails at once; docs/runtime*.md show the same table (a test compares them).

Numbering: TLR0xx the run itself, TLR1xx overfit and the training step, TLR2xx gradients,
TLR3xx first-step sanity checks, TLR4xx fit and data, TLR5xx lr-find, TLR6xx profile.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Severity = Literal["error", "warning", "info"]


@dataclass(frozen=True)
class Code:
    code: str
    name: str
    severity: Severity
    #: the check whose page documents it ("all": any check)
    check: str
    #: what it means, in a line
    title: str
    #: the line of the user's code it points at
    where: str

    @property
    def page(self) -> str:
        """The documentation page with its row."""
        return {
            "fit": "runtime-fit.md",
            "lr-find": "runtime-lr-find.md",
            "profile": "runtime-profile.md",
        }.get(self.check, "runtime.md")


_TABLE: tuple[tuple[str, str, Severity, str, str, str], ...] = (
    # the run
    ("TLR001", "script-crashed", "error", "all", "the script raised", "the line that raised"),
    (
        "TLR002",
        "script-timeout",
        "error",
        "all",
        "the script ran past --timeout",
        "the line the script was stuck on",
    ),
    (
        "TLR003",
        "capture-failed",
        "error",
        "all",
        "the training step was not found",
        "the backward or forward, when seen",
    ),
    (
        "TLR004",
        "script-exited",
        "error",
        "all",
        "the script called sys.exit with an error",
        "the `sys.exit` call",
    ),
    (
        "TLR005",
        "torchlint-failure",
        "error",
        "all",
        "torchlint's own code failed, not the script",
        "the line of the script that was running when torchlint's own code failed",
    ),
    (
        "TLR006",
        "check-not-applicable",
        "info",
        "all",
        "the check does not apply to this loop, and why",
        "the line that decides it",
    ),
    # overfit and the training step
    (
        "TLR100",
        "overfit-failed",
        "error",
        "overfit",
        "the model did not fit one batch",
        "the backward call",
    ),
    (
        "TLR101",
        "overfit-nan",
        "error",
        "overfit",
        "the loss became non-finite",
        "the backward call",
    ),
    (
        "TLR102",
        "initial-loss-off",
        "warning",
        "overfit",
        "the first loss is far above a uniform prediction's",
        "the loss call",
    ),
    (
        "TLR103",
        "loss-not-differentiable",
        "error",
        "overfit",
        "backward() on a loss that does not require grad",
        "the backward call",
    ),
    (
        "TLR104",
        "zero-learning-rate",
        "error",
        "overfit",
        "a learning rate of 0 at the first step",
        "the optimizer's construction",
    ),
    (
        "TLR105",
        "optimizer-not-over-model",
        "error",
        "overfit",
        "the optimizer holds none of the trained model's parameters",
        "the optimizer's construction",
    ),
    (
        "TLR106",
        "no-gradient-reaches-model",
        "error",
        "overfit",
        "no trainable parameter got a gradient",
        "the backward call",
    ),
    (
        "TLR107",
        "gradients-not-cleared",
        "error",
        "overfit",
        "gradients accumulate across optimizer steps",
        "the optimizer step",
    ),
    (
        "TLR108",
        "manual-update-changes-nothing",
        "error",
        "overfit",
        "the script's own parameter update leaves the parameters as they were",
        "the update line",
    ),
    (
        "TLR109",
        "manual-update",
        "info",
        "overfit",
        "parameters are updated by hand, without torch.optim",
        "the update line",
    ),
    (
        "TLR110",
        "accuracy-far-from-one",
        "warning",
        "overfit",
        "the loss fell but the batch is not predicted",
        "the loss call",
    ),
    # gradients
    (
        "TLR201",
        "never-gradient",
        "error",
        "grads",
        "parameters never get a gradient",
        "each module's creation",
    ),
    (
        "TLR202",
        "zero-gradient",
        "warning",
        "grads",
        "parameters get all-zero gradients",
        "each module's creation",
    ),
    (
        "TLR203",
        "nonfinite-gradient",
        "error",
        "grads",
        "a gradient became non-finite",
        "the backward call",
    ),
    (
        "TLR204",
        "frozen-parameters",
        "info",
        "grads",
        "frozen parameters (warning when overfit fails, error when every parameter is frozen)",
        "the `requires_grad_(False)` / `requires_grad = False` line, else the module's creation",
    ),
    (
        "TLR205",
        "not-in-optimizer",
        "error",
        "grads",
        "trainable parameters in no optimizer",
        "the optimizer's construction",
    ),
    (
        "TLR206",
        "optimizer-params-not-in-model",
        "warning",
        "grads",
        "the optimizer holds parameters of no model",
        "the optimizer's construction",
    ),
    (
        "TLR207",
        "vanishing-gradients",
        "warning",
        "grads",
        "gradients vanish with depth",
        "the backward call",
    ),
    (
        "TLR208",
        "exploding-gradients",
        "warning",
        "grads",
        "gradients explode with depth",
        "the backward call",
    ),
    (
        "TLR209",
        "gradients-differ-across-ranks",
        "error",
        "grads",
        "a parameter's gradients differ across ranks after the all-reduce",
        "the first such parameter's creation (torchrun)",
    ),
    # first-step sanity checks
    (
        "TLR301",
        "label-out-of-range",
        "error",
        "all",
        "class targets outside 0..C-1",
        "the loss call",
    ),
    (
        "TLR302",
        "loss-shape-broadcast",
        "error",
        "all",
        "output and target shapes broadcast in a regression loss",
        "the loss call",
    ),
    (
        "TLR303",
        "probabilities-to-logits-loss",
        "error",
        "all",
        "softmax or sigmoid outputs into a loss that wants logits or log-probabilities",
        "the loss call",
    ),
    (
        "TLR304",
        "eval-mode-training",
        "error",
        "all",
        "the training step ran a model with dropout or batch norm in eval mode",
        "the training forward",
    ),
    (
        "TLR305",
        "validation-without-no-grad",
        "warning",
        "all",
        "a validation forward records a graph",
        "the validation forward",
    ),
    # mixed precision (child/amp.py), any check
    (
        "TLR306",
        "amp-unscaled-backward",
        "error",
        "all",
        "scaler.step() on gradients of a loss that was not scaled",
        "the backward call",
    ),
    (
        "TLR307",
        "amp-step-bypasses-scaler",
        "error",
        "all",
        "optimizer.step() directly on scaled gradients",
        "the optimizer step",
    ),
    (
        "TLR308",
        "amp-clip-before-unscale",
        "error",
        "all",
        "gradient clipping on scaled gradients, without scaler.unscale_",
        "the clipping call",
    ),
    # fit
    (
        "TLR401",
        "fit-overfitting",
        "warning",
        "fit",
        "the validation loss rises",
        "the validation loss call",
    ),
    (
        "TLR402",
        "fit-underfitting",
        "warning",
        "fit",
        "both losses stay high",
        "the training loss call",
    ),
    ("TLR403", "fit-nan", "error", "fit", "a loss became non-finite", "the backward call"),
    (
        "TLR404",
        "nan-operation",
        "error",
        "fit",
        "the operation whose backward returned NaN",
        "the forward line of the operation (`--detect-anomaly`)",
    ),
    (
        "TLR405",
        "train-val-overlap",
        "error",
        "fit",
        "validation samples are training samples",
        "the overlapping loader's construction",
    ),
    (
        "TLR406",
        "label-class-missing",
        "warning",
        "fit",
        "classes never seen among the labels",
        "the training DataLoader's construction",
    ),
    (
        "TLR407",
        "label-imbalance",
        "warning",
        "fit",
        "one class dominates the labels",
        "the training DataLoader's construction",
    ),
    (
        "TLR408",
        "labels-outside-classes",
        "error",
        "fit",
        "labels outside the model's classes",
        "the training DataLoader's construction",
    ),
    (
        "TLR409",
        "no-comparable-validation",
        "info",
        "fit",
        "no validation value comparable with the training loss",
        "the training loss call",
    ),
    # lr-find
    (
        "TLR501",
        "lr-above-divergence",
        "error",
        "lr-find",
        "the script's lr is far above where the sweep diverged",
        "the optimizer's construction",
    ),
    (
        "TLR502",
        "lr-far-below-suggestion",
        "warning",
        "lr-find",
        "the script's lr is far below the suggestion",
        "the optimizer's construction",
    ),
    (
        "TLR503",
        "lr-find-no-descent",
        "warning",
        "lr-find",
        "the loss never fell in the sweep",
        "the backward call",
    ),
    (
        "TLR504",
        "lr-find-diverged-at-start",
        "warning",
        "lr-find",
        "the loss diverged at the first learning rates",
        "the backward call",
    ),
    (
        "TLR505",
        "lr-find-too-few-steps",
        "warning",
        "lr-find",
        "too few steps for a sweep",
        "the optimizer step",
    ),
    (
        "TLR506",
        "lr-find-optimizer-not-swept",
        "info",
        "lr-find",
        "another optimizer stepped with its own lr",
        "the other optimizer's construction",
    ),
    (
        "TLR507",
        "lr-find-plot-not-written",
        "warning",
        "lr-find",
        "the --plot file was not written",
        "(no line)",
    ),
    # profile
    (
        "TLR601",
        "data-loading-bottleneck",
        "warning",
        "profile",
        "waiting for data dominates",
        "the training DataLoader's construction",
    ),
    (
        "TLR602",
        "pin-memory-off",
        "info",
        "profile",
        "the loader does not pin memory on CUDA",
        "the training DataLoader's construction",
    ),
    (
        "TLR603",
        "host-sync-in-step",
        "warning",
        "profile",
        "device synchronisations in every step",
        "the line that syncs",
    ),
    (
        "TLR604",
        "optimizer-not-fused",
        "info",
        "profile",
        "a large per-tensor optimizer step",
        "the optimizer's construction",
    ),
    (
        "TLR605",
        "validation-with-grad",
        "warning",
        "profile",
        "validation forwards record a graph",
        "the validation forward",
    ),
    (
        "TLR606",
        "rank-skew",
        "warning",
        "profile",
        "one rank is slower than the others",
        "the training DataLoader when the skew is in data_wait",
    ),
    (
        "TLR607",
        "non-blocking-from-pageable",
        "warning",
        "profile",
        "non_blocking=True copies from memory that is not pinned",
        "the copy",
    ),
    (
        "TLR608",
        "blocking-copy-from-pinned",
        "info",
        "profile",
        "pinned tensors copied without non_blocking=True",
        "the copy",
    ),
)

CODES: dict[str, Code] = {row[0]: Code(*row) for row in _TABLE}


def lookup(code: str) -> Code:
    """The registered code; KeyError for a code that is not (a finding must be registered)."""
    return CODES[code]


def table(page: str) -> str:
    """The markdown table of the codes documented on `page` (docs/runtime*.md shows it as is;
    a test compares them)."""
    rows = ["| Code | Name | Severity | Where |", "|---|---|---|---|"]
    rows += [
        f"| {c.code} | {c.name} | {c.severity} | {c.where} |"
        for c in CODES.values()
        if c.page == page
    ]
    return "\n".join(rows)
