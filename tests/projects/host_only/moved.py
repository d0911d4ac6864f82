# The same loop over a model that a helper module puts on the GPU (`placement.py` spells it):
# reported with and without the project.
import torch

from nets import batches
from placement import build_on_gpu

model = build_on_gpu()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for epoch in range(3):
    for x, y in batches(10):
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        print(loss.item())  # alone: TL301 project: TL301
