# A CPU-only script: no file around it names where tensors go, so `.item()` reads a host tensor. Alone,
# `nets` is an unknown module that might place the model, and the sync is reported.
import torch

from nets import batches, build

model = build()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for epoch in range(3):
    for x, y in batches(10):
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        print(loss.item())  # alone: TL301
