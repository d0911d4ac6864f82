# A flat script: a head that ends in nn.Sigmoid and a functional sigmoid, both into the logits loss.
import torch
import torch.nn.functional as F
from torch import nn

model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1), nn.Sigmoid())
criterion = nn.BCEWithLogitsLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
data = [(torch.randn(4, 8), torch.rand(4, 1)) for _ in range(10)]

for x, y in data:
    optimizer.zero_grad()
    loss = criterion(model(x), y)  # expect: TL114
    scores = torch.sigmoid(model[:3](x))
    aux = F.binary_cross_entropy_with_logits(scores, y)  # expect: TL114
    (loss + aux).backward()
    optimizer.step()
