# Accumulation over four micro-batches, the step every fourth, the loss never divided.
import torch
from torch import nn

model = nn.Linear(4, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
criterion = nn.CrossEntropyLoss()
loader = [(torch.randn(8, 4), torch.randint(0, 2, (8,))) for _ in range(16)]
accumulation_steps = 4

for i, (x, y) in enumerate(loader):
    loss = criterion(model(x), y)
    loss.backward()  # expect: TL117
    if (i + 1) % accumulation_steps == 0:
        optimizer.step()
        optimizer.zero_grad()
