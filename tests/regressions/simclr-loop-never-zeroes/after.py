import torch
from torch import nn

encoder = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 16))
optimizer = torch.optim.Adam(encoder.parameters(), lr=3e-4)
loader = [(torch.randn(8, 32), torch.randn(8, 32)) for _ in range(10)]


def contrastive_loss(a, b, temperature=0.5):
    a, b = nn.functional.normalize(a, dim=1), nn.functional.normalize(b, dim=1)
    logits = a @ b.t() / temperature
    return nn.functional.cross_entropy(logits, torch.arange(a.size(0)))


n_iter = 0
for epoch in range(5):
    for view_i, view_j in loader:
        optimizer.zero_grad()
        z_i, z_j = encoder(view_i), encoder(view_j)
        loss = contrastive_loss(z_i, z_j)
        loss.backward()
        optimizer.step()
        n_iter += 1
