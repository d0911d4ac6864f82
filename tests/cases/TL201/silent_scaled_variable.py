import torch

model = torch.nn.Linear(10, 1)
optimizer = torch.optim.AdamW(model.parameters())
grad_scaler = torch.amp.GradScaler("cuda")

for x in [torch.randn(4, 10)] * 8:
    optimizer.zero_grad()
    with torch.autocast("cuda"):
        loss = model(x).mean()
    scaled = grad_scaler.scale(loss)
    scaled.backward()
    grad_scaler.step(optimizer)
    grad_scaler.update()
