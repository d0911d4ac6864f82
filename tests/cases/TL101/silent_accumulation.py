import torch

model = torch.nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
accum_steps = 4
loader = [torch.randn(2, 3) for _ in range(16)]

for step, x in enumerate(loader):
    loss = model(x).sum() / accum_steps
    loss.backward()
    if (step + 1) % accum_steps == 0:
        optimizer.step()
        optimizer.zero_grad()
