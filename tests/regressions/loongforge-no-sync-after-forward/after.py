import contextlib

import torch
import torch.distributed as dist


class FinetuneTrainer:
    """Gradient accumulation over micro-batches with DDP: only the last micro-batch of a step
    should all-reduce gradients."""

    def __init__(self, model, optimizer, accumulation_steps):
        self.model = model
        self.optimizer = optimizer
        self.accumulation_steps = accumulation_steps

    def _train_forward(self, batch):
        outputs = self.model(**batch)
        return outputs.loss / self.accumulation_steps

    def _sync_context(self, is_last):
        if dist.is_initialized() and not is_last and hasattr(self.model, "no_sync"):
            return self.model.no_sync()
        return contextlib.nullcontext()

    def train_step(self, micro_batches):
        self.optimizer.zero_grad()
        for index, batch in enumerate(micro_batches):
            is_last = index == len(micro_batches) - 1
            with self._sync_context(is_last):
                loss = self._train_forward(batch)
                loss.backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
        self.optimizer.step()
