import torch
from torch import nn

loader = [torch.randn(8, 4) for _ in range(4)]
for width in (16, 32, 64):
    model = nn.Sequential(nn.Linear(4, width), nn.ReLU(), nn.Linear(width, 1))
    model = torch.compile(model)
    optimizer = torch.optim.Adam(model.parameters())
    for x in loader:
        loss = model(x).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

for name in ("a", "b"):
    scorer = torch.compile(lambda t: t.sum())
    print(name, scorer(torch.ones(3)))
