# The loss gets the logits; the sigmoid is only for the metric, or the loss expects probabilities.
import torch
import torch.nn.functional as F
from torch import nn

model = nn.Linear(8, 1)
criterion = nn.BCEWithLogitsLoss()
prob_criterion = nn.BCELoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for x, y in [(torch.randn(4, 8), torch.rand(4, 1))]:
    optimizer.zero_grad()
    logits = model(x)
    loss = criterion(logits, y) + F.binary_cross_entropy_with_logits(logits, y)
    probs = torch.sigmoid(logits)
    loss = loss + prob_criterion(probs, y) + F.binary_cross_entropy(probs, y)
    accuracy = ((probs > 0.5).float() == y).float().mean()
    loss.backward()
    optimizer.step()
