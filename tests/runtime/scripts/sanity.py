"""Seeded first-step bugs: the model left in eval mode (with dropout), softmax before
cross-entropy."""

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Dropout(0.2), nn.Linear(32, 4))

    def forward(self, x):
        return torch.softmax(self.layers(x), dim=1)


torch.manual_seed(0)
loader = DataLoader(TensorDataset(torch.randn(64, 8), torch.randint(0, 4, (64,))), batch_size=16)
model = Net()
model.eval()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
criterion = nn.CrossEntropyLoss()
for epoch in range(100):
    for x, y in loader:
        optimizer.zero_grad()
        out = model(x)  # line: forward
        loss = criterion(out, y)  # line: loss
        loss.backward()
        optimizer.step()
