# A trainer skips both the step and the update when the gradient norm blows up.
import torch
from torch import nn


class Trainer:
    def __init__(self, model: nn.Module, loader, max_norm: float = 1.0):
        self.model = model
        self.loader = loader
        self.max_norm = max_norm
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
        self.scaler = torch.amp.GradScaler("cuda")

    def train_epoch(self):
        for batch, target in self.loader:
            with torch.autocast("cuda", dtype=torch.float16):
                loss = nn.functional.mse_loss(self.model(batch), target)
            self.scaler.scale(loss).backward()
            self.scaler.unscale_(self.optimizer)  # expect: TL207
            grad_norm = nn.utils.clip_grad_norm_(self.model.parameters(), self.max_norm)
            if grad_norm < 10 * self.max_norm:
                self.scaler.step(self.optimizer)
                self.scaler.update()
            self.optimizer.zero_grad()
