import torch


@torch.no_grad()
def evaluate(net, loader):
    net.eval()
    return sum(net(x).sum() for x, _ in loader)


def train_one_epoch(net, loader, optimizer):
    for x, y in loader:
        optimizer.zero_grad()
        torch.nn.functional.mse_loss(net(x), y).backward()
        optimizer.step()


def main():
    model = torch.nn.Linear(3, 1)
    optimizer = torch.optim.Adam(model.parameters())
    model.train()
    for epoch in range(10):
        train_one_epoch(model, [], optimizer)
        evaluate(model, [])  # expect: TL105
