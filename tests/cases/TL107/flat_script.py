import torch
from torch import nn

model = nn.Linear(32, 10)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
loader = [(torch.randn(16, 32), torch.randint(0, 10, (16,))) for _ in range(50)]
epochs = 10
scheduler = torch.optim.lr_scheduler.OneCycleLR(
    optimizer, max_lr=0.1, total_steps=epochs * len(loader)
)
decay = torch.optim.lr_scheduler.StepLR(optimizer, step_size=3, gamma=0.5)

for epoch in range(epochs):
    decay.step()  # expect: TL107
    for x, y in loader:
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        scheduler.step()  # expect: TL107
        optimizer.step()
