import torch

model = torch.nn.Linear(10, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)


def evaluate(model, loader):
    model.eval()
    with torch.no_grad():
        return [model(x) for x in loader]


def train_epoch(model, loader):
    model.train()
    for x in loader:
        optimizer.zero_grad()
        model(x).sum().backward()
        optimizer.step()


for epoch in range(3):
    train_epoch(model, [])
    evaluate(model, [])

for epoch in range(3):
    model.train()
    for x in []:
        optimizer.zero_grad()
        model(x).sum().backward()
        optimizer.step()
    evaluate(model, [])
