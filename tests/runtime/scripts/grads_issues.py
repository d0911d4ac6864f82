"""Gradient problems: an unused auxiliary head, a frozen embedding, a layer left out of the
optimizer."""

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Linear(8, 16)  # line: embed
        self.body = nn.Linear(16, 16)  # line: body
        self.head = nn.Linear(16, 4)  # line: head
        self.aux_head = nn.Linear(16, 4)  # line: aux

    def forward(self, x):
        return self.head(torch.relu(self.body(self.embed(x))))


torch.manual_seed(0)
loader = DataLoader(TensorDataset(torch.randn(64, 8), torch.randint(0, 4, (64,))), batch_size=16)
model = Model()
model.embed.requires_grad_(False)  # line: freeze
params = [p for name, p in model.named_parameters() if not name.startswith("head.")]
optimizer = torch.optim.SGD(params, lr=0.1)  # line: optimizer
for epoch in range(10):
    for x, y in loader:
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()  # line: backward
        optimizer.step()
