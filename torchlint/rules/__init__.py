"""The rule registry: every rule torchlint knows, in code order."""

from __future__ import annotations

from torchlint.rules.amp.backward_inside_autocast import BackwardInsideAutocast
from torchlint.rules.amp.clip_without_unscale import ClipWithoutUnscale
from torchlint.rules.amp.deprecated_cuda_amp import DeprecatedCudaAmp
from torchlint.rules.amp.fp16_without_scaler import Fp16WithoutScaler
from torchlint.rules.amp.scaler_update_skipped import ScalerUpdateSkipped
from torchlint.rules.amp.step_bypasses_scaler import StepBypassesScaler
from torchlint.rules.amp.unscaled_backward import UnscaledBackward
from torchlint.rules.api.checkpoint_without_use_reentrant import CheckpointWithoutUseReentrant
from torchlint.rules.api.deprecated_api import DeprecatedApi
from torchlint.rules.api.deprecated_torchvision_pretrained import DeprecatedTorchvisionPretrained
from torchlint.rules.api.discarded_tensor_conversion import DiscardedTensorConversion
from torchlint.rules.api.removed_api import RemovedApi
from torchlint.rules.api.require_grad_typo import RequireGradTypo
from torchlint.rules.api.unsafe_torch_load import UnsafeTorchLoad
from torchlint.rules.api.unstable_log_exp import UnstableLogExp
from torchlint.rules.base import Rule
from torchlint.rules.data.missing_set_epoch import MissingSetEpoch
from torchlint.rules.data.rng_copied_to_workers import RngCopiedToWorkers
from torchlint.rules.data.sampler_with_shuffle import SamplerWithShuffle
from torchlint.rules.data.unshuffled_training_loader import UnshuffledTrainingLoader
from torchlint.rules.distributed.backward_bypasses_framework import BackwardBypassesFramework
from torchlint.rules.distributed.collective_under_rank_guard import CollectiveUnderRankGuard
from torchlint.rules.distributed.gather_in_evaluation import GatherInEvaluation
from torchlint.rules.distributed.manual_step_in_training_step import ManualStepInTrainingStep
from torchlint.rules.distributed.save_on_every_rank import SaveOnEveryRank
from torchlint.rules.distributed.sync_decided_after_forward import SyncDecidedAfterForward
from torchlint.rules.distributed.sync_dist_every_step import SyncDistEveryStep
from torchlint.rules.loop.accumulated_loss_not_scaled import AccumulatedLossNotScaled
from torchlint.rules.loop.backward_under_no_grad import BackwardUnderNoGrad
from torchlint.rules.loop.clip_after_step import ClipAfterStep
from torchlint.rules.loop.clip_per_micro_batch import ClipPerMicroBatch
from torchlint.rules.loop.compile_in_training_loop import CompileInTrainingLoop
from torchlint.rules.loop.discriminator_on_attached_fake import DiscriminatorOnAttachedFake
from torchlint.rules.loop.eval_mode_leak import EvalModeLeak
from torchlint.rules.loop.eval_without_no_grad import EvalWithoutNoGrad
from torchlint.rules.loop.evaluation_in_train_mode import EvaluationInTrainMode
from torchlint.rules.loop.logits_into_nll_loss import LogitsIntoNllLoss
from torchlint.rules.loop.loss_accumulated_with_graph import LossAccumulatedWithGraph
from torchlint.rules.loop.missing_optimizer_step import MissingOptimizerStep
from torchlint.rules.loop.missing_zero_grad import MissingZeroGrad
from torchlint.rules.loop.optimizer_over_replaced_module import OptimizerOverReplacedModule
from torchlint.rules.loop.retain_graph_without_reuse import RetainGraphWithoutReuse
from torchlint.rules.loop.scheduler_before_optimizer_step import SchedulerBeforeOptimizerStep
from torchlint.rules.loop.scheduler_stepped_per_epoch import SchedulerSteppedPerEpoch
from torchlint.rules.loop.sigmoid_into_bce_with_logits import SigmoidIntoBceWithLogits
from torchlint.rules.loop.softmax_into_cross_entropy import SoftmaxIntoCrossEntropy
from torchlint.rules.loop.step_before_backward import StepBeforeBackward
from torchlint.rules.loop.step_without_backward import StepWithoutBackward
from torchlint.rules.loop.zero_grad_between_backward_and_step import ZeroGradBetweenBackwardAndStep
from torchlint.rules.loop.zero_grad_defeats_accumulation import ZeroGradDefeatsAccumulation
from torchlint.rules.speed.blocking_transfer import BlockingTransfer
from torchlint.rules.speed.host_tensor_then_moved import HostTensorThenMoved
from torchlint.rules.speed.item_in_hot_loop import ItemInHotLoop
from torchlint.rules.speed.sync_in_compiled_function import SyncInCompiledFunction
from torchlint.rules.speed.sync_in_hot_loop import SyncInHotLoop
from torchlint.rules.speed.synchronous_dataloader import SynchronousDataLoader
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
            EvalWithoutNoGrad,
            SchedulerBeforeOptimizerStep,
            LossAccumulatedWithGraph,
            SoftmaxIntoCrossEntropy,
            LogitsIntoNllLoss,
            CompileInTrainingLoop,
            BackwardUnderNoGrad,
            ZeroGradDefeatsAccumulation,
            ClipWithoutUnscale,
            Fp16WithoutScaler,
            BackwardInsideAutocast,
            ScalerUpdateSkipped,
            SyncInHotLoop,
            SyncInCompiledFunction,
            SynchronousDataLoader,
            BlockingTransfer,
            HostTensorThenMoved,
            UnshuffledTrainingLoader,
            MissingSetEpoch,
            RemovedApi,
            DeprecatedApi,
            UnsafeTorchLoad,
            CheckpointWithoutUseReentrant,
            RequireGradTypo,
            SigmoidIntoBceWithLogits,
            ClipAfterStep,
            ClipPerMicroBatch,
            AccumulatedLossNotScaled,
            SchedulerSteppedPerEpoch,
            RetainGraphWithoutReuse,
            DiscriminatorOnAttachedFake,
            StepWithoutBackward,
            EvaluationInTrainMode,
            OptimizerOverReplacedModule,
            DeprecatedTorchvisionPretrained,
            UnstableLogExp,
            DiscardedTensorConversion,
            CollectiveUnderRankGuard,
            GatherInEvaluation,
            SyncDistEveryStep,
            SyncDecidedAfterForward,
            SamplerWithShuffle,
            RngCopiedToWorkers,
            BackwardBypassesFramework,
            ManualStepInTrainingStep,
            SaveOnEveryRank,
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
