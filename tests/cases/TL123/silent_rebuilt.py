import copy

import torch
from torch import nn

model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
model.head = nn.Linear(2, 4)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = [(torch.randn(4, 8), torch.randint(0, 4, (4,))) for _ in range(8)]
for x, y in loader:
    optimizer.zero_grad()
    nn.functional.cross_entropy(model(x), y).backward()
    optimizer.step()

head = nn.Linear(16, 4)
head_opt = torch.optim.Adam(head.parameters())
head.extra = nn.Linear(4, 4)
head_opt.add_param_group({"params": head.extra.parameters()})
head_opt.step()

best = copy.deepcopy(model)  # a snapshot: the optimizer goes on with `model`
ema = copy.deepcopy(model)
optimizer.step()


def fold_loop(folds):
    for train_loader in folds:
        net = nn.Linear(8, 2)
        opt = torch.optim.SGD(net.parameters(), lr=0.1)
        for x, y in train_loader:
            opt.zero_grad()
            nn.functional.cross_entropy(net(x), y).backward()
            opt.step()
        net = nn.Linear(8, 2)  # the next fold builds its own optimizer
