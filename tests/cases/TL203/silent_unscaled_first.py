import torch
from torch import nn

model = nn.Linear(512, 10).cuda()
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
scaler = torch.amp.GradScaler("cuda")
loader = [(torch.randn(64, 512), torch.randint(0, 10, (64,))) for _ in range(100)]

for x, y in loader:
    optimizer.zero_grad()
    with torch.autocast("cuda"):
        loss = nn.functional.cross_entropy(model(x.cuda()), y.cuda())
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    scaler.step(optimizer)
    scaler.update()


def unscale_and_clip(scaler, optimizer, model, max_norm):
    scaler.unscale_(optimizer)
    return nn.utils.clip_grad_norm_(model.parameters(), max_norm)


def train_accumulated(model, loader, optimizer, scaler, accum=4):
    for step, (x, y) in enumerate(loader):
        with torch.autocast("cuda"):
            loss = nn.functional.cross_entropy(model(x), y) / accum
        scaler.scale(loss).backward()
        if (step + 1) % accum == 0:
            unscale_and_clip(scaler, optimizer, model, 1.0)
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()
