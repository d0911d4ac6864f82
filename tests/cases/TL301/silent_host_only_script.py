# A script that never names where its tensors go and imports only libraries that keep them on
# the host: `.item()` waits for nothing.
import numpy as np
import torch

W_target = torch.randn(4, 1)
model = torch.nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(5):
    for step in range(100):
        x = torch.from_numpy(np.random.randn(32, 4)).float()
        y = x.mm(W_target)
        optimizer.zero_grad()
        loss = torch.nn.functional.smooth_l1_loss(model(x), y)
        loss.backward()
        optimizer.step()
        print(f"loss {loss.item():.4f}")
