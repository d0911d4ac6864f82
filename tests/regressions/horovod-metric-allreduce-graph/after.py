"""An averaging Metric's update() all-reduces the loss tensor without detaching it, so each step's graph lives on in self.sum."""
import torch
import torch.nn.functional as F
from torch import nn

WORLD_SIZE = 1


def allreduce(tensor, name=None):
    # stand-in for a differentiable framework all-reduce that averages over workers
    return tensor * 1.0 / WORLD_SIZE


class AverageOverWorkers(object):
    def __init__(self, name):
        self.name = name
        self.sum = torch.tensor(0.)
        self.n = torch.tensor(0.)

    def update(self, value):
        self.sum += allreduce(value.detach().cpu(), name=self.name)
        self.n += 1

    @property
    def avg(self):
        return self.sum / self.n


def top1(output, target):
    return (output.argmax(dim=1) == target).cpu().float().mean()


def train_epoch(model, optimizer, batches):
    model.train()
    loss_meter = AverageOverWorkers("train_loss")
    acc_meter = AverageOverWorkers("train_accuracy")
    for images, labels in batches:
        optimizer.zero_grad()
        output = model(images)
        loss = F.cross_entropy(output, labels)
        loss.backward()
        optimizer.step()
        loss_meter.update(loss)
        acc_meter.update(top1(output, labels))
        print("loss %.4f acc %.3f" % (loss_meter.avg.item(), acc_meter.avg.item()))


if __name__ == "__main__":
    net = nn.Sequential(nn.Flatten(), nn.Linear(3 * 16 * 16, 64), nn.ReLU(), nn.Linear(64, 10))
    opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    data = [(torch.randn(32, 3, 16, 16), torch.randint(0, 10, (32,))) for _ in range(20)]
    for epoch in range(2):
        train_epoch(net, opt, data)
