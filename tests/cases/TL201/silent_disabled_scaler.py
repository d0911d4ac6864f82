import torch

model = torch.nn.Linear(10, 1)
optimizer = torch.optim.AdamW(model.parameters())
scaler = torch.amp.GradScaler("cuda", enabled=False)

for x in [torch.randn(4, 10)] * 8:
    optimizer.zero_grad()
    loss = model(x).mean()
    loss.backward()
    optimizer.step()
