"""An EMA wrapper that resumes its averaged weights from a checkpoint with a bare torch.load."""
from copy import deepcopy

import torch
from torch import nn


class ModelEma:
    def __init__(self, model, decay=0.9999, resume=""):
        self.ema = deepcopy(model).eval()
        self.decay = decay
        if resume:
            self._load_checkpoint(resume)

    def _load_checkpoint(self, checkpoint_path):
        checkpoint = torch.load(checkpoint_path, map_location="cpu", weights_only=True)
        state = checkpoint.get("state_dict_ema", checkpoint)
        self.ema.load_state_dict(state)

    @torch.no_grad()
    def update(self, model):
        for e, m in zip(self.ema.parameters(), model.parameters()):
            e.mul_(self.decay).add_(m, alpha=1 - self.decay)


if __name__ == "__main__":
    ModelEma(nn.Linear(2, 2))
