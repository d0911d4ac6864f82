import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

features, targets = torch.randn(50_000, 32), torch.randint(0, 2, (50_000,))
train_set = TensorDataset(features[:45_000], targets[:45_000])
val_set = TensorDataset(features[45_000:], targets[45_000:])
train_loader = DataLoader(train_set, batch_size=256, num_workers=4)  # expect: TL401
val_loader = DataLoader(val_set, batch_size=1024, shuffle=False, num_workers=4)

model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 2))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

for epoch in range(20):
    model.train()
    for x, y in train_loader:
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
    model.eval()
    with torch.no_grad():
        acc = sum((model(x).argmax(1) == y).sum().item() for x, y in val_loader) / len(val_set)
