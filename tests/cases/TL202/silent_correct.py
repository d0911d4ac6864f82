import torch

model = torch.nn.Linear(10, 1)
optimizer = torch.optim.AdamW(model.parameters())
scaler = torch.amp.GradScaler("cuda")

for x in [torch.randn(4, 10)] * 8:
    optimizer.zero_grad(set_to_none=True)
    with torch.autocast("cuda"):
        loss = model(x).mean()
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    scaler.step(optimizer)
    scaler.update()
