import torch
from torch import nn

import model

device = "cuda" if torch.cuda.is_available() else "cpu"
ntokens = 100
model = model.TransformerModel(ntokens).to(device)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=20.0)


def train(batches):
    model.train()
    for data, targets in batches:
        optimizer.zero_grad()
        output = model(data)
        loss = criterion(output.view(-1, ntokens), targets)  # project: TL109
        loss.backward()
        optimizer.step()
