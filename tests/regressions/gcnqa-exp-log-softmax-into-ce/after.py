"""A candidate-ranking model that turns its masked scores into probabilities with
exp(log_softmax(...)) and hands them to CrossEntropyLoss."""
import torch
from torch import nn


class CandidateRanker(nn.Module):
    def __init__(self, dim=64):
        super().__init__()
        self.score = nn.Linear(dim, 1)

    def forward(self, nodes, candidate_groups, target=None):
        logits = self.score(nodes).squeeze(-1)
        masked = torch.stack([logits[idx].max() for idx in candidate_groups])
        if target is not None:
            loss = nn.CrossEntropyLoss()(masked.view(1, -1), target)
            return masked, loss
        return masked


model = CandidateRanker()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(100):
    nodes = torch.randn(30, 64)
    groups = [torch.tensor([0, 1, 2]), torch.tensor([3, 4]), torch.tensor([5, 6, 7, 8])]
    optimizer.zero_grad()
    _, loss = model(nodes, groups, torch.tensor([1]))
    loss.backward()
    optimizer.step()
