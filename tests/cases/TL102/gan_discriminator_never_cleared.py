# The encoder's optimizer is cleared every iteration, the discriminator's never: its gradients
# sum over all iterations, including those the encoder loss leaves on it.
import torch
import torch.nn.functional as F
from torch import nn

encoder = nn.Linear(48, 16)
decoder = nn.Linear(16, 48)
disc = nn.Linear(48, 1)
optimizer_e = torch.optim.Adam(encoder.parameters(), lr=1e-4)
optimizer_d = torch.optim.Adam(disc.parameters(), lr=1e-4)

for step in range(5000):
    x = torch.rand(16, 48)
    x_rec = decoder(encoder(x))
    loss_d = F.softplus(-disc(x)).mean() + F.softplus(disc(x_rec.detach())).mean()
    loss_d.backward()  # expect: TL102
    optimizer_d.step()

    optimizer_e.zero_grad()
    loss_e = F.mse_loss(x_rec, x) + F.softplus(-disc(x_rec)).mean()
    loss_e.backward()
    optimizer_e.step()
