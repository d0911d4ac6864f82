import torch
from torch import nn

model = nn.Linear(16, 4)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = [(torch.randn(8, 16), torch.randint(0, 4, (8,))) for _ in range(20)]

correct = 0
for x, y in loader:
    logits = model(x)
    per_batch = []
    per_batch.append(nn.functional.cross_entropy(logits, y))
    loss = torch.stack(per_batch).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    correct += (logits.argmax(1) == y).sum()
    preds = logits.argmax(1)
    correct += (preds == y).sum()
