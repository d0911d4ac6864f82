import torch


def train_amp(model, optimizer, loader):
    scaler = torch.amp.GradScaler("cuda")
    for x in loader:
        optimizer.zero_grad()
        scaler.scale(model(x).sum()).backward()
        scaler.step(optimizer)
        scaler.update()


def train_plain(model, optimizer, loader):
    for x in loader:
        optimizer.zero_grad()
        model(x).sum().backward()
        optimizer.step()


if __name__ == "__main__":
    model = torch.nn.Linear(3, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for run in range(2):
        train_amp(model, optimizer, [])
        train_plain(model, optimizer, [])
