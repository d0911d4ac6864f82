import torch

model = torch.nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=10)

for i, x in enumerate([torch.randn(2, 3)] * 20):
    if i > 0 and i % 4 == 0:
        optimizer.step()
        optimizer.zero_grad()
    model(x).sum().backward()

for x in [torch.randn(2, 3)] * 20:
    scheduler.step()
    optimizer.zero_grad()
    model(x).sum().backward()
    optimizer.step()
