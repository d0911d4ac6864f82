"""A token model whose targets mask the prompt positions with -1 (ignore_index=-1): accuracy
counts only the unmasked ones."""

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
tokens = torch.randint(0, 12, (128, 8))
targets = torch.randint(0, 12, (128, 8))
targets[:, :5] = -1  # the prompt: nothing to predict
loader = DataLoader(TensorDataset(tokens, targets), batch_size=16, shuffle=True)


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(12, 64)
        self.mix = nn.Linear(8 * 64, 8 * 64)
        self.out = nn.Linear(64, 12)

    def forward(self, idx):
        h = self.embed(idx)
        h = torch.relu(self.mix(h.flatten(1))).view(idx.shape[0], 8, 64)
        return self.out(h)


model = Tagger()
optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
for epoch in range(300):
    for x, y in loader:
        optimizer.zero_grad()
        logits = model(x)
        loss = nn.functional.cross_entropy(logits.view(-1, 12), y.view(-1), ignore_index=-1)
        loss.backward()
        optimizer.step()
