# A module that overrides train(mode) to keep its batch norms frozen: `net.train()` is still
# the mode switch, and the loop switches back before each epoch's backward.
import torch
from torch import nn


class FrozenNormNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(8, 8), nn.BatchNorm1d(8), nn.Dropout(0.2))
        self.head = nn.Linear(8, 2)

    def forward(self, x):
        return self.head(self.body(x))

    def train(self, mode=True):
        super().train(mode)
        for m in self.modules():
            if isinstance(m, nn.BatchNorm1d):
                m.eval()
        return self


net = FrozenNormNet()
optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
for epoch in range(3):
    net.train()
    for x, y in [(torch.randn(4, 8), torch.randint(0, 2, (4,)))]:
        optimizer.zero_grad()
        nn.functional.cross_entropy(net(x), y).backward()
        optimizer.step()
    net.eval()
    with torch.no_grad():
        net(torch.randn(4, 8))
