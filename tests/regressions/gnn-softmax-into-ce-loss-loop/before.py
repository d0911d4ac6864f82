"""A matching loss whose cross-entropy comes in as a constructor default; it softmaxes the whole
batch and then feeds each softmaxed element to that cross-entropy."""
import torch
from torch import nn


class MatchingLoss(nn.Module):
    def __init__(self, loss=nn.CrossEntropyLoss(reduction="sum")):
        super().__init__()
        self.loss = loss

    def forward(self, raw_scores):
        total, count = 0.0, 0
        outputs = torch.softmax(raw_scores, -1)
        for out in outputs:
            n_vertices = out.shape[0]
            target = torch.arange(n_vertices, device=out.device)
            total = total + self.loss(out, target)
            count += n_vertices
        return total / count


model = nn.Bilinear(16, 16, 1)
criterion = MatchingLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(200):
    a, b = torch.randn(4, 10, 16), torch.randn(4, 10, 16)
    scores = torch.einsum("bid,bjd->bij", a, b)
    optimizer.zero_grad()
    loss = criterion(scores * model.weight.sum())
    loss.backward()
    optimizer.step()
