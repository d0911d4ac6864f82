import torch
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP


def train(model, optimizer, loader, distributed, device):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model = model.to(device)
    model = torch.compile(model)
    if distributed:
        model = DDP(model, device_ids=[device])
    else:
        model = nn.DataParallel(model)
    for x, y in loader:
        optimizer.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()


def evaluate_after(model, optimizer, loader, path):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in loader:
        optimizer.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
    model = nn.Linear(8, 1)  # evaluated on its own: the optimizer is done
    model.load_state_dict(torch.load(path, weights_only=True))
    return model(torch.randn(2, 8))


def choose(model_name, loader):
    if model_name == "small":
        model = nn.Linear(8, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    else:
        model = nn.Sequential(nn.Linear(8, 32), nn.Linear(32, 1))
        optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for x, y in loader:
        optimizer.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
