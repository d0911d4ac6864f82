import torch
from torch import nn

import model

ntokens = 100
model = model.RawModel(ntokens).to("cpu")
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=20.0)

for data, targets in [(torch.randn(4, ntokens), torch.randint(0, ntokens, (4,)))]:
    optimizer.zero_grad()
    loss = criterion(model(data), targets)
    loss.backward()
    optimizer.step()
