# The same CPU-looking loop, but the file imports a module torchlint cannot read on its own
# (it may place the model on a GPU), so the per-step sync is reported.
import torch
from models import build_regressor

model = build_regressor()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(5):
    for step in range(100):
        x = torch.randn(32, 4)
        optimizer.zero_grad()
        loss = model(x).pow(2).mean()
        loss.backward()
        optimizer.step()
        print(f"loss {loss.item():.4f}")  # expect: TL301
