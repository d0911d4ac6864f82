# The usual accumulation pattern: clear right after the guarded step, and on a micro-batch loop,
# once per step.
import torch
import torch.nn.functional as F

model = torch.nn.Linear(16, 4)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
accumulation_steps = 8
loader = [(torch.randn(4, 16), torch.randint(0, 4, (4,))) for _ in range(64)]

for i, (x, y) in enumerate(loader):
    loss = F.cross_entropy(model(x), y) / accumulation_steps
    loss.backward()
    if (i + 1) % accumulation_steps == 0:
        optimizer.step()
        optimizer.zero_grad()

for batch in loader:
    optimizer.zero_grad()
    for chunk in batch[0].chunk(2):
        model(chunk).sum().backward()
    optimizer.step()
