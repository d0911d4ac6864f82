# OneCycleLR sized for every batch of every epoch, stepped once per epoch.
import torch
from torch import nn

model = nn.Linear(4, 2)
loader = [(torch.randn(8, 4), torch.randint(0, 2, (8,))) for _ in range(50)]
epochs = 10
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scheduler = torch.optim.lr_scheduler.OneCycleLR(
    optimizer, max_lr=0.1, epochs=epochs, steps_per_epoch=len(loader)
)

for epoch in range(epochs):
    for x, y in loader:
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
    scheduler.step()  # expect: TL118
