# The loss is computed and logged, the backward line is gone: every step applies nothing.
import torch
from torch import nn

model = nn.Linear(4, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = [(torch.randn(8, 4), torch.randint(0, 2, (8,))) for _ in range(16)]

for epoch in range(3):
    for x, y in loader:
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        optimizer.step()  # expect: TL121
        print(f"epoch {epoch} loss {loss.item():.3f}")
