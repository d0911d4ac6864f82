import torch
from torch import nn

model = nn.Linear(10, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = [(torch.randn(8, 10), torch.randn(8, 1)) for _ in range(4)]

for epoch in range(3):
    optimizer.zero_grad()  # once per epoch: gradients pile up across batches
    for x, y in loader:
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()  # expect: TL102
        optimizer.step()
