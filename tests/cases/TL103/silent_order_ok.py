import torch

model = torch.nn.Linear(10, 1)
optimizer = torch.optim.Adam(model.parameters())
data = [torch.randn(4, 10)] * 10

for x in data:
    optimizer.zero_grad()
    model(x).sum().backward()
    optimizer.step()

for x in data:
    model(x).sum().backward()
    optimizer.step()
    optimizer.zero_grad()
