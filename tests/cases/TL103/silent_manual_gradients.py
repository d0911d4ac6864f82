import copy

import torch


def adapt(model, x, y):
    fast = copy.deepcopy(model)
    inner = torch.optim.SGD(fast.parameters(), lr=0.01)
    for _ in range(5):
        inner.zero_grad()
        torch.nn.functional.mse_loss(fast(x), y).backward()
        inner.step()
    return fast


model = torch.nn.Linear(4, 1)
meta_optimizer = torch.optim.Adam(model.parameters())
for it in range(1000):
    x, y = torch.randn(8, 4), torch.randn(8, 1)
    fast = adapt(model, x, y)
    meta_optimizer.zero_grad()
    for p, fp in zip(model.parameters(), fast.parameters()):
        p.grad = p.detach() - fp.detach()
    meta_optimizer.step()

for it in range(10):
    loss = model(torch.randn(2, 4)).sum()
    loss.backward()
    norms = [p.grad.norm() for p in model.parameters() if p.grad is not None]
    meta_optimizer.step()
    meta_optimizer.zero_grad()
