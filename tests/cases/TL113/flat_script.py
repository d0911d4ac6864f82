import torch
from torch import nn

model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 1))
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
loader = [(torch.randn(16, 32), torch.randn(16, 1)) for _ in range(10)]

for epoch in range(10):
    model = torch.compile(model)  # expect: TL113
    for x, y in loader:
        loss = nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
