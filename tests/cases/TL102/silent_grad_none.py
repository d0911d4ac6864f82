import torch

model = torch.nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)

for x in [torch.randn(2, 3)] * 4:
    for p in model.parameters():
        p.grad = None
    model(x).sum().backward()
    optimizer.step()


for x in [torch.randn(2, 3)] * 4:
    model.zero_grad()
    model(x).sum().backward()
    optimizer.step()
