# The clear is under the same accumulation guard as the step (before it runs again), a logging
# guard is not an accumulation window, and a closure recomputes the loss inside the step.
import torch
import torch.nn.functional as F

model = torch.nn.Linear(16, 4)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
lbfgs = torch.optim.LBFGS(model.parameters())
accumulate = 4
loader = [(torch.randn(4, 16), torch.randint(0, 4, (4,))) for _ in range(64)]

for i, (x, y) in enumerate(loader):
    if i % accumulate == 0:
        optimizer.zero_grad()
    loss = F.cross_entropy(model(x), y) / accumulate
    loss.backward()
    if i % accumulate == accumulate - 1:
        optimizer.step()

for step, (x, y) in enumerate(loader):
    optimizer.zero_grad()
    F.cross_entropy(model(x), y).backward()
    optimizer.step()
    if step % 100 == 0:
        print(step)

for x, y in loader:

    def closure():
        lbfgs.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        return loss

    for _ in range(3):
        lbfgs.step(closure)
