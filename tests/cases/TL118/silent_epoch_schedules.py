# Schedules sized in epochs and stepped per epoch; a per-batch schedule stepped per batch;
# a plateau schedule fed the validation loss.
import torch
from torch import nn

model = nn.Linear(4, 2)
loader = [(torch.randn(8, 4), torch.randint(0, 2, (8,))) for _ in range(50)]
epochs = 10
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
by_epoch = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=epochs)
steps = torch.optim.lr_scheduler.StepLR(optimizer, step_size=30)
per_batch = torch.optim.lr_scheduler.OneCycleLR(
    optimizer, max_lr=0.1, total_steps=epochs * len(loader)
)
plateau = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer)

for epoch in range(epochs):
    for x, y in loader:
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        per_batch.step()
    by_epoch.step()
    steps.step()
    plateau.step(loss.item())

# A budget in iterations divided by the loader's length is a number of epochs: the schedule
# below is sized in epochs and stepped per epoch.
max_iterations = 5000
num_epochs = max_iterations // len(loader)
warm = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=num_epochs)
for epoch in range(num_epochs):
    for x, y in loader:
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
    warm.step()
