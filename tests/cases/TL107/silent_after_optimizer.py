import torch
from torch import nn

model = nn.Linear(32, 10)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("cuda")
loader = [(torch.randn(16, 32), torch.randint(0, 10, (16,))) for _ in range(50)]
per_step = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=0.1, total_steps=500)
per_epoch = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=[30, 60], gamma=0.1)

for epoch in range(10):
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda"):
            loss = nn.functional.cross_entropy(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        per_step.step()
    per_epoch.step()
