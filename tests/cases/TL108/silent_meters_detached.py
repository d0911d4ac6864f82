# Near-misses: the meter gets a number or a detached tensor, the reduction is of a detached
# loss, and `.cpu()` follows `.detach()`.
import torch
from accelerate import Accelerator


class AverageMeter:
    def __init__(self):
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        self.sum += val * n
        self.count += n


def train(model, loader, optimizer, device):
    total = 0
    meter = AverageMeter()
    for x, y in loader:
        loss = model(x.to(device)).sum()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        total += loss.detach().cpu()
        meter.update(loss.item(), x.size(0))
        meter.update(loss.detach())
    return total, meter.sum


def train_accelerate(model, loader, optimizer):
    accelerator = Accelerator()
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    total = 0
    for x, y in loader:
        loss = model(x).sum()
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
        total += accelerator.reduce(loss.detach(), "mean")
    return total


class WorkerAverage:
    """A meter that detaches what it is given before it all-reduces and adds it."""

    def __init__(self, name):
        self.name = name
        self.sum = torch.tensor(0.0)
        self.n = 0

    def update(self, val):
        self.sum += all_reduce_mean(val.detach().cpu(), name=self.name)
        self.n += 1


def all_reduce_mean(tensor, name=None):
    return tensor / 1.0


def train_workers(model, loader, optimizer):
    meter = WorkerAverage("loss")
    for x, y in loader:
        loss = model(x).sum()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        meter.update(loss)
    return meter.sum
