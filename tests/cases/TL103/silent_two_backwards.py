import torch

model = torch.nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for x in [torch.randn(2, 3)] * 3:
    probe = model(x).pow(2).sum()
    probe.backward()
    grad_norm = sum(p.grad.norm() for p in model.parameters())
    optimizer.zero_grad()
    loss = model(x).sum()
    loss.backward()
    optimizer.step()
