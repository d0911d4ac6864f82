# The optimizer steps in an inner loop that is not over batches (critic iterations per
# batch), and the step-sized schedule is stepped once per batch: right.
import torch


def train(generator, critic, loader, epochs, n_critic=5):
    g_opt = torch.optim.Adam(generator.parameters(), lr=1e-4)
    d_opt = torch.optim.Adam(critic.parameters(), lr=1e-4)
    d_sched = torch.optim.lr_scheduler.LinearLR(d_opt, total_iters=epochs * len(loader))
    for epoch in range(epochs):
        for real in loader:
            for _ in range(n_critic):
                d_opt.zero_grad()
                (
                    critic(generator(torch.randn(8, 16)).detach()).mean() - critic(real).mean()
                ).backward()
                d_opt.step()
            d_sched.step()
            g_opt.zero_grad()
            (-critic(generator(torch.randn(8, 16))).mean()).backward()
            g_opt.step()
