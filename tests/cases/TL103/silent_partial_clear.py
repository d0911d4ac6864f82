# Dropping the gradients of one layer on purpose (DINO freezes its last layer early on): the
# other parameters still step.
import torch
from torch import nn

model = nn.Sequential(nn.Linear(8, 8), nn.Linear(8, 4))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
freeze_last_layer = 1


def cancel_gradients_last_layer(epoch, model, freeze_last_layer):
    if epoch >= freeze_last_layer:
        return
    for n, p in model.named_parameters():
        if n.startswith("1."):
            p.grad = None


for epoch in range(3):
    for x in [torch.randn(2, 8)]:
        optimizer.zero_grad()
        model(x).sum().backward()
        cancel_gradients_last_layer(epoch, model, freeze_last_layer)
        optimizer.step()
