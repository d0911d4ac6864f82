"""A loss that cannot decrease: the model's outputs are detached, and a constant that requires
grad keeps backward() from complaining."""

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
data = TensorDataset(torch.randn(1024, 8), torch.randint(0, 4, (1024,)))
loader = DataLoader(data, batch_size=32, shuffle=True)
model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 4))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
offset = torch.zeros((), requires_grad=True)

for epoch in range(20):
    for x, y in loader:
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x).detach(), y) + offset
        loss.backward()  # line: backward
        optimizer.step()
