# A flat script: the batch tuple's items and a mask built here, converted by statements.
import torch
import torch.nn.functional as F
from torch import nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = nn.Linear(8, 2).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = [(torch.randn(4, 8), torch.randint(0, 2, (4,))) for _ in range(10)]
weights = torch.ones(2)
weights.to(device)  # expect: TL508

for epoch in range(3):
    for x, y in loader:
        x.to(device)  # expect: TL508
        y = y.to(device)
        optimizer.zero_grad()
        F.cross_entropy(model(x), y, weight=weights).backward()
        optimizer.step()
