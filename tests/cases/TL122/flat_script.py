# The validation loop switches the model back to train mode before each forward.
import torch
from torch import nn

model = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.5), nn.Linear(8, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
train_loader = [(torch.randn(8, 4), torch.randint(0, 2, (8,))) for _ in range(16)]
val_loader = [(torch.randn(8, 4), torch.randint(0, 2, (8,))) for _ in range(4)]

for epoch in range(3):
    model.train()
    for x, y in train_loader:
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
    model.eval()
    with torch.no_grad():
        correct = 0
        for x, y in val_loader:
            model.train()  # expect: TL122
            correct += (model(x).argmax(1) == y).sum().item()
