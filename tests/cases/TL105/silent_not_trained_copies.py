# Models that no optimizer trains: an EMA copy and a teacher are evaluated every epoch, and a
# linear probe's training function puts the frozen backbone in eval mode on purpose.
import copy

import torch
from torch import nn

model = nn.Sequential(nn.Linear(8, 8), nn.BatchNorm1d(8), nn.Linear(8, 2))
ema_model = copy.deepcopy(model)
teacher = nn.Sequential(nn.Linear(8, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = [(torch.randn(4, 8), torch.randint(0, 2, (4,))) for _ in range(8)]


def evaluate(net):
    net.eval()
    with torch.no_grad():
        return sum(net(x).argmax(1).eq(y).sum().item() for x, y in loader)


for epoch in range(10):
    model.train()
    for x, y in loader:
        loss = nn.functional.cross_entropy(model(x), y) + teacher(x).sum() * 0
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        with torch.no_grad():
            for e, p in zip(ema_model.parameters(), model.parameters()):
                e.mul_(0.99).add_(p, alpha=0.01)
    evaluate(ema_model)
    evaluate(teacher)


def train_probe(backbone, head, probe_optimizer):
    backbone.eval()  # frozen BN statistics: the probe trains in eval mode on purpose
    for x, y in loader:
        loss = nn.functional.cross_entropy(head(backbone(x)), y)
        probe_optimizer.zero_grad()
        loss.backward()
        probe_optimizer.step()


head = nn.Linear(2, 2)
probe_optimizer = torch.optim.SGD(head.parameters(), lr=0.1)
for epoch in range(10):
    train_probe(model, head, probe_optimizer)
    evaluate(model)
