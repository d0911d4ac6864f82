"""A GradScaler misused three ways (on the CPU), chosen by the first argument: `unscaled`
(the loss is scaled, but the plain loss is backwarded, then scaler.step), `never` (scaler.scale never called: torch raises in scaler.step), `bypass` (scaled backward, then optimizer.step)
or `clip` (clip_grad_norm_ on scaled gradients, no unscale_)."""

import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

mistake = sys.argv[1]
torch.manual_seed(0)
loader = DataLoader(TensorDataset(torch.randn(64, 8), torch.randint(0, 4, (64,))), batch_size=16)
model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 4))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("cpu", init_scale=1024.0)
for _epoch in range(100):
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cpu", dtype=torch.bfloat16):
            loss = nn.functional.cross_entropy(model(x), y)
        if mistake == "unscaled":
            scaled = scaler.scale(loss)  # computed, then not used
            loss.backward()  # line: unscaled_backward
            scaler.step(optimizer)
        elif mistake == "never":
            loss.backward()  # line: never_scaled
            scaler.step(optimizer)  # torch asserts: the scale was never initialised
        elif mistake == "bypass":
            scaler.scale(loss).backward()
            optimizer.step()  # line: bypass_step
            continue  # (scaler.update() would raise: no scaler.step recorded an inf check)
        else:
            scaler.scale(loss).backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)  # line: clip
            scaler.step(optimizer)
        scaler.update()
