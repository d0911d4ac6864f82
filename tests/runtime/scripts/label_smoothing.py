"""Cross-entropy with label smoothing: its floor is the entropy of the smoothed targets."""

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
loader = DataLoader(
    TensorDataset(torch.randn(256, 16), torch.randint(0, 5, (256,))), batch_size=32, shuffle=True
)
model = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 5))
criterion = nn.CrossEntropyLoss(label_smoothing=0.2)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
for epoch in range(300):
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
