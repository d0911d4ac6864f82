# The critic's iterations in a helper: each builds its own graph and retains it anyway.
import torch


def optimize_critic(generator, critic, critic_opt, real, n_critic):
    for _ in range(n_critic):
        fake = generator(torch.randn(real.shape[0], 16)).detach()
        loss = critic(fake).mean() - critic(real).mean()
        critic_opt.zero_grad()
        loss.backward(retain_graph=True)  # expect: TL119
        critic_opt.step()


def train(generator, critic, loader, n_critic=5):
    critic_opt = torch.optim.Adam(critic.parameters(), lr=1e-4)
    for real in loader:
        optimize_critic(generator, critic, critic_opt, real, n_critic)
