import torch
import torch.nn.functional as F
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(784, 128)
        self.out = nn.Linear(128, 10)

    def forward(self, x):
        return self.out(F.relu(self.hidden(x.flatten(1))))


model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
loader = [(torch.randn(64, 1, 28, 28), torch.randint(0, 10, (64,))) for _ in range(10)]

for epoch in range(3):
    for data, target in loader:
        optimizer.zero_grad()
        loss = F.nll_loss(model(data), target)  # expect: TL112
        loss.backward()
        optimizer.step()

for data, target in loader:
    probs = F.softmax(model(data), dim=1)
    loss = F.nll_loss(probs, target)  # expect: TL112
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
