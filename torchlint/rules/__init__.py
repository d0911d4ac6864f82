"""The rule registry: every rule torchlint knows, in code order."""

from __future__ import annotations

from torchlint.rules.amp.deprecated_cuda_amp import DeprecatedCudaAmp
from torchlint.rules.amp.step_bypasses_scaler import StepBypassesScaler
from torchlint.rules.amp.unscaled_backward import UnscaledBackward
from torchlint.rules.base import Rule
from torchlint.rules.loop.eval_mode_leak import EvalModeLeak
from torchlint.rules.loop.missing_optimizer_step import MissingOptimizerStep
from torchlint.rules.loop.missing_zero_grad import MissingZeroGrad
from torchlint.rules.loop.step_before_backward import StepBeforeBackward
from torchlint.rules.loop.zero_grad_between_backward_and_step import ZeroGradBetweenBackwardAndStep
from torchlint.rules.speed.item_in_hot_loop import ItemInHotLoop
from torchlint.rules.syntax_error import SyntaxErrorRule

ALL_RULES: tuple[type[Rule], ...] = tuple(
    sorted(
        (
            SyntaxErrorRule,
            MissingOptimizerStep,
            MissingZeroGrad,
            ZeroGradBetweenBackwardAndStep,
            StepBeforeBackward,
            EvalModeLeak,
            UnscaledBackward,
            StepBypassesScaler,
            DeprecatedCudaAmp,
            ItemInHotLoop,
        ),
        key=lambda rule: rule.code,
    )
)

BY_CODE: dict[str, type[Rule]] = {rule.code: rule for rule in ALL_RULES}
BY_NAME: dict[str, type[Rule]] = {rule.name: rule for rule in ALL_RULES}


def lookup(key: str) -> type[Rule] | None:
    """A rule by code (`TL101`, any case) or kebab-case name (`missing-optimizer-step`)."""
    return BY_CODE.get(key.upper()) or BY_NAME.get(key.lower())


__all__ = ["ALL_RULES", "BY_CODE", "BY_NAME", "Rule", "lookup"]
