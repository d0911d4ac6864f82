# The switch comes before the forward it governs: nanoGPT's flag, a no_sync() block that holds
# the forward, a flag reset after the backward for the next iteration, a forward under no_grad.
import contextlib

import torch
from torch.nn.parallel import DistributedDataParallel as DDP

model = DDP(torch.nn.Linear(8, 8))
optimizer = torch.optim.AdamW(model.parameters())
accum = 4
for step in range(10):
    for micro_step in range(accum):
        model.require_backward_grad_sync = micro_step == accum - 1
        loss = model(torch.randn(4, 8)).pow(2).mean() / accum
        loss.backward()
    optimizer.step()
    optimizer.zero_grad()

for step in range(10):
    for micro_step in range(accum):
        context = model.no_sync() if micro_step < accum - 1 else contextlib.nullcontext()
        with context:
            loss = model(torch.randn(4, 8)).pow(2).mean()
            loss.backward()
        with model.no_sync():
            loss = model(torch.randn(4, 8)).pow(2).mean()
            loss.backward()
    optimizer.step()
    optimizer.zero_grad()

for step in range(10):
    with torch.no_grad():
        reference = model(torch.randn(4, 8))
    with model.no_sync():
        loss = (model(torch.randn(4, 8)) - reference).pow(2).mean()
        loss.backward()
    loss = model(torch.randn(4, 8)).pow(2).mean()
    loss.backward()
    model.require_backward_grad_sync = False
    optimizer.step()
    optimizer.zero_grad()
