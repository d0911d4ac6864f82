import torch

G = torch.nn.Linear(8, 8)
D = torch.nn.Linear(8, 1)
opt_g = torch.optim.Adam(G.parameters())
opt_d = torch.optim.Adam(D.parameters())

for real in [torch.randn(4, 8)] * 5:
    opt_d.zero_grad()
    fake = G(torch.randn(4, 8))
    d_loss = D(real).mean() - D(fake.detach()).mean()
    d_loss.backward()
    opt_d.step()

    opt_g.zero_grad()
    g_loss = -D(fake).mean()
    g_loss.backward()
    D.zero_grad()
    opt_g.step()
