"""The validation loader is built over the training dataset object itself (one word changed from
`val_dataset`). `--named-for-training` names it `train_eval_loader`: an evaluation of the
training split on purpose, next to a held-out loader."""

import sys

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
train_dataset = TensorDataset(torch.randn(256, 8), torch.randint(0, 4, (256,)))
val_dataset = TensorDataset(torch.randn(64, 8), torch.randint(0, 4, (64,)))
train_loader = DataLoader(train_dataset, batch_size=32, shuffle=True)
if "--named-for-training" in sys.argv:
    train_eval_loader = DataLoader(train_dataset, batch_size=32)
    loaders = [train_eval_loader, DataLoader(val_dataset, batch_size=32)]
else:
    val_loader = DataLoader(train_dataset, batch_size=32)  # line: val
    loaders = [val_loader]
model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 4))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
for epoch in range(20):
    for x, y in train_loader:
        optimizer.zero_grad()
        F.cross_entropy(model(x), y).backward()
        optimizer.step()
    with torch.no_grad():
        for loader in loaders:
            for x, y in loader:
                F.cross_entropy(model(x), y)
