import torch


def forward_backward(model, batch, criterion):
    inputs, labels = batch
    loss = criterion(model(inputs), labels)
    loss.backward()  # expect: TL102
    return loss


def train(model, loader, optimizer, criterion):
    for batch in loader:
        forward_backward(model, batch, criterion)
        optimizer.step()


if __name__ == "__main__":
    net = torch.nn.Linear(4, 2)
    train(net, [], torch.optim.SGD(net.parameters(), lr=0.1), torch.nn.CrossEntropyLoss())
