import torch

model = torch.nn.Linear(10, 1)
optimizer = torch.optim.AdamW(model.parameters())
scaler = torch.amp.GradScaler("cuda")
accum = 4

for i, x in enumerate([torch.randn(4, 10)] * 16):
    with torch.autocast("cuda"):
        loss = model(x).mean() / accum
    scaler.scale(loss).backward()
    if (i + 1) % accum == 0:
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
