# The clipping helper decides to skip large updates, and the update goes with the step.
import torch
from torch import nn


def clip_and_step(model, optimizer, scaler, max_norm, allowed):
    scaler.unscale_(optimizer)  # expect: TL207
    norm = nn.utils.clip_grad_norm_(model.parameters(), max_norm).item()
    skip = norm > allowed
    if not skip:
        scaler.step(optimizer)
        scaler.update()


def train(model, loader, criterion, steps):
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    scaler = torch.amp.GradScaler("cuda")
    for step in range(steps):
        x, y = next(loader)
        with torch.autocast("cuda", dtype=torch.float16):
            loss = criterion(model(x), y)
        scaler.scale(loss).backward()
        clip_and_step(model, optimizer, scaler, 1.0, 5.0)
        optimizer.zero_grad(set_to_none=True)
