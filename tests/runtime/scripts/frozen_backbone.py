"""The backbone is frozen and the head alone cannot fit the batch."""

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 2))  # line: bb
        self.head = nn.Linear(2, 10)

    def forward(self, x):
        return self.head(self.backbone(x))


torch.manual_seed(0)
loader = DataLoader(
    TensorDataset(torch.randn(256, 16), torch.randint(0, 10, (256,))), batch_size=64
)
model = Classifier()
for p in model.backbone.parameters():
    p.requires_grad = False  # line: freeze
optimizer = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=1e-2)
for epoch in range(100):
    for x, y in loader:
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()  # line: backward
        optimizer.step()
