"""The training loss averages (reduction mean), the evaluation sums over the batch (reduction
sum, as pytorch/examples' MNIST test does): fit compares them per element."""

import torch
from torch import nn
from torch.utils.data import DataLoader, Subset, TensorDataset, random_split

torch.manual_seed(0)
x = torch.randn(600, 10)
y = (x[:, :3].sum(dim=1) > 0).long() + (x[:, 3] > 1).long()
train_set, val_set = random_split(TensorDataset(x, y), [480, 120])
train_loader = DataLoader(train_set, batch_size=32, shuffle=True)
val_loader = DataLoader(val_set, batch_size=40)
# the training samples again, to measure training accuracy: an evaluation of that split on purpose
train_eval_loader = DataLoader(Subset(train_set.dataset, train_set.indices), batch_size=40)
model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 3))
optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
for epoch in range(20):
    model.train()
    for xb, yb in train_loader:
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(xb), yb).backward()
        optimizer.step()
    model.eval()
    with torch.no_grad():
        total = 0.0
        for xb, yb in val_loader:
            total += nn.functional.cross_entropy(model(xb), yb, reduction="sum").item()
        for xb, yb in train_eval_loader:
            nn.functional.cross_entropy(model(xb), yb, reduction="sum")
    print(f"epoch {epoch}: validation loss {total / len(val_set):.4f}")
