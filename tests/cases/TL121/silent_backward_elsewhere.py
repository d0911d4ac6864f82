# Gradients come from somewhere the step's loop shows: a backward in a helper, a scaled
# backward, a manual gradient, torch.autograd.grad, a closure, a call that does the step's work.
import torch
from torch import nn

model = nn.Linear(4, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("cpu")
loader = [(torch.randn(8, 4), torch.randint(0, 2, (8,))) for _ in range(4)]


def compute_gradients(x, y):
    nn.functional.cross_entropy(model(x), y).backward()


for x, y in loader:
    optimizer.zero_grad()
    compute_gradients(x, y)
    optimizer.step()

for x, y in loader:
    optimizer.zero_grad()
    scaler.scale(nn.functional.cross_entropy(model(x), y)).backward()
    scaler.step(optimizer)
    scaler.update()

for x, y in loader:
    optimizer.zero_grad()
    loss = nn.functional.cross_entropy(model(x), y)
    grads = torch.autograd.grad(loss, list(model.parameters()))
    for p, g in zip(model.parameters(), grads):
        p.grad = g
    optimizer.step()

for x, y in loader:

    def closure():
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        return loss

    optimizer.step(closure)


def train_step(batch):
    x, y = batch
    nn.functional.cross_entropy(model(x), y).backward()


for batch in loader:
    optimizer.zero_grad()
    train_step(batch)
    optimizer.step()
