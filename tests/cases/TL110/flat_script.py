import torch
from torch import nn

model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
loader = [(torch.randn(16, 10), torch.randn(16, 1)) for _ in range(20)]

for epoch in range(10):
    for x, y in loader:
        optimizer.zero_grad()
        with torch.no_grad():
            pred = model(x)
            loss = nn.functional.mse_loss(pred, y)
        loss.backward()  # expect: TL110
        optimizer.step()

with torch.inference_mode():
    for x, y in loader:
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()  # expect: TL110
        optimizer.step()
