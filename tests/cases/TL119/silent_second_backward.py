# A second backward through the retained graph in the same iteration (a shared trunk, two
# heads); a retain decided by a flag; a loop over the losses of one graph.
import torch
from torch import nn

trunk, head_a, head_b = nn.Linear(4, 8), nn.Linear(8, 1), nn.Linear(8, 1)
opt_a = torch.optim.SGD([*trunk.parameters(), *head_a.parameters()], lr=0.1)
opt_b = torch.optim.SGD(head_b.parameters(), lr=0.1)
loader = [torch.randn(8, 4) for _ in range(4)]

for x in loader:
    features = trunk(x)
    opt_a.zero_grad()
    opt_b.zero_grad()
    head_a(features).mean().backward(retain_graph=True)
    head_b(features).mean().backward()
    opt_a.step()
    opt_b.step()

for i, x in enumerate(loader):
    loss = head_a(trunk(x)).mean()
    loss.backward(retain_graph=i < len(loader) - 1)
    opt_a.step()

for x in loader:
    features = trunk(x)
    losses = [head_a(features).mean(), head_b(features).mean()]
    for loss in losses:
        loss.backward(retain_graph=True)
    opt_a.step()
