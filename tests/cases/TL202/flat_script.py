import torch

model = torch.nn.Linear(10, 1)
optimizer = torch.optim.AdamW(model.parameters())
scaler = torch.amp.GradScaler("cuda")

for x in [torch.randn(4, 10)] * 8:
    optimizer.zero_grad()
    with torch.autocast("cuda"):
        loss = model(x).mean()
    scaler.scale(loss).backward()
    optimizer.step()  # expect: TL202
    scaler.update()
