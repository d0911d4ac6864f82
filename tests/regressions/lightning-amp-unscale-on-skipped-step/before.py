import torch


class MixedPrecision:
    """A trainer's precision plugin: the framework calls optimizer_step() once per training
    step, with a closure that runs the forward and the backward (and returns None when the
    user's training_step returned None, to skip the step)."""

    def __init__(self) -> None:
        self.scaler = torch.amp.GradScaler("cuda")

    def optimizer_step(self, optimizer, closure, automatic_optimization=True):
        closure_result = closure()
        self.scaler.unscale_(optimizer)  # for gradient clipping in the hooks
        skipped_backward = closure_result is None
        if not automatic_optimization or not skipped_backward:
            step_output = self.scaler.step(optimizer)
            self.scaler.update()
            return step_output
        return closure_result
