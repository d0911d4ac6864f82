# Train mode before a forward that trains (a backward follows), or with gradients on.
import torch
from torch import nn

model = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.2), nn.Linear(8, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
val_loader = [(torch.randn(8, 4), torch.randint(0, 2, (8,))) for _ in range(4)]


def finetune_on_validation(model, val_loader):
    for x, y in val_loader:
        model.train()
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()


def evaluate(model, val_loader):
    model.eval()
    for x, y in val_loader:
        model.train()
        print(nn.functional.cross_entropy(model(x), y).item())
