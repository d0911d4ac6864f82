# Accelerate accumulates: the clip is guarded by sync_gradients, or the window is the
# framework's own (`accumulate()` skips the step and clip until the window closes).
import torch
from accelerate import Accelerator
from torch import nn


def train(model, loader):
    accelerator = Accelerator(gradient_accumulation_steps=4)
    optimizer = torch.optim.AdamW(model.parameters())
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    for x, y in loader:
        with accelerator.accumulate(model):
            loss = nn.functional.mse_loss(model(x), y)
            accelerator.backward(loss)
            if accelerator.sync_gradients:
                accelerator.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            optimizer.zero_grad()
