"""GradScaler used right, three near-misses of amp_misuse.py, chosen by the first argument:
`accumulate` (scaled loss divided for gradient accumulation, unscale_ then clip, step every 2),
`disabled` (GradScaler(enabled=False): plain backward, clipping and optimizer.step are right),
`two` (two losses, each scaled, one scaler step)."""

import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

variant = sys.argv[1]
torch.manual_seed(0)
loader = DataLoader(TensorDataset(torch.randn(64, 8), torch.randint(0, 4, (64,))), batch_size=16)
model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 4))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("cpu", init_scale=1024.0, enabled=variant != "disabled")
for _epoch in range(100):
    for i, (x, y) in enumerate(loader):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            out = model(x)
            loss = nn.functional.cross_entropy(out, y)
        if variant == "accumulate":
            (scaler.scale(loss) / 2).backward()
            if i % 2 == 1:
                scaler.unscale_(optimizer)
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                scaler.step(optimizer)
                scaler.update()
                optimizer.zero_grad()
        elif variant == "disabled":
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
        else:
            optimizer.zero_grad()
            scaler.scale(loss).backward(retain_graph=True)
            scaler.scale(out.float().pow(2).mean() * 1e-3).backward()
            scaler.step(optimizer)
            scaler.update()
