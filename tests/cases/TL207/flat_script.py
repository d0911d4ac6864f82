# A NaN guard after the unscale skips the rest of the iteration, scaler.update() included.
import torch
from torch import nn

model = nn.Linear(4, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("cpu")
loader = [(torch.randn(8, 4), torch.randint(0, 2, (8,))) for _ in range(16)]

for x, y in loader:
    optimizer.zero_grad()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = nn.functional.cross_entropy(model(x), y)
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)  # expect: TL207
    norm = nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    if not torch.isfinite(norm):
        continue
    scaler.step(optimizer)
    scaler.update()
