import torch

w = torch.randn(3, requires_grad=True)
lr = 0.1
optim_steps = 10
for _ in range(optim_steps):
    loss = (w ** 2).sum()
    loss.backward()
    with torch.no_grad():
        w -= lr * w.grad
        w.grad = None
