"""Mixed precision on CUDA, by the first argument: `fp16` (float16 autocast and a GradScaler,
used right), `bf16` (bfloat16 autocast, no scaler), and the three misuses `unscaled`, `bypass`
and `clip` (as in tests/runtime/scripts/amp_misuse.py, on CUDA with float16)."""

import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

variant = sys.argv[1]
torch.manual_seed(0)
device = torch.device("cuda")
data = TensorDataset(torch.randn(512, 64), torch.randint(0, 8, (512,)))
loader = DataLoader(data, batch_size=64, pin_memory=True)
model = nn.Sequential(
    nn.Linear(64, 256), nn.GELU(), nn.Linear(256, 256), nn.GELU(), nn.Linear(256, 8)
)
model = model.to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
dtype = torch.bfloat16 if variant == "bf16" else torch.float16
scaler = torch.amp.GradScaler("cuda", enabled=variant != "bf16")
for _epoch in range(1000):
    for x, y in loader:
        x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=dtype):
            loss = nn.functional.cross_entropy(model(x), y)
        if variant in ("fp16", "bf16"):
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(optimizer)
            scaler.update()
        elif variant == "unscaled":
            scaled = scaler.scale(loss)  # computed, then not used
            loss.backward()  # line: unscaled_backward
            scaler.step(optimizer)
            scaler.update()
        elif variant == "bypass":
            scaler.scale(loss).backward()
            optimizer.step()  # line: bypass_step
        else:
            scaler.scale(loss).backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)  # line: clip
            scaler.step(optimizer)
            scaler.update()
