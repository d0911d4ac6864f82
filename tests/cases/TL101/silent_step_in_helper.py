import torch


def update(optimizer):
    optimizer.step()
    optimizer.zero_grad()


model = torch.nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for x in [torch.randn(2, 3)]:
    loss = model(x).sum()
    loss.backward()
    update(optimizer)
