import torch


def clear(model):
    for p in model.parameters():
        p.grad = None  # expect: TL103


def train(model, loader, optimizer):
    for inputs, targets in loader:
        loss = torch.nn.functional.cross_entropy(model(inputs), targets)
        loss.backward()
        clear(model)
        optimizer.step()


model = torch.nn.Linear(4, 2)
train(model, [], torch.optim.SGD(model.parameters(), lr=0.1))
