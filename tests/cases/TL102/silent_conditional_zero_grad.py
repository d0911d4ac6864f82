import torch

model = torch.nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
accumulation = 8

for i, x in enumerate([torch.randn(2, 3)] * 32):
    loss = model(x).sum() / accumulation
    loss.backward()
    if (i + 1) % accumulation == 0:
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
