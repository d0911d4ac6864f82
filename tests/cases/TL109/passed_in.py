import torch
import torch.nn.functional as F


def to_probs(logits):
    return F.softmax(logits, dim=-1)


def train(model, loader, optimizer, criterion):
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(to_probs(model(x)), y)  # expect: TL109
        loss.backward()
        optimizer.step()
        F.cross_entropy(to_probs(model(x)), y)  # expect: TL109


def main(loader):
    net = torch.nn.Linear(8, 3)
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    criterion = torch.nn.CrossEntropyLoss()
    train(net, loader, optimizer, criterion)
