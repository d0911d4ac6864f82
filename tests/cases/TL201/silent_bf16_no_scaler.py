import torch

model = torch.nn.Linear(10, 1)
optimizer = torch.optim.AdamW(model.parameters())

for x in [torch.randn(4, 10)] * 8:
    optimizer.zero_grad()
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = model(x).mean()
    loss.backward()
    optimizer.step()
