# A gradient penalty: the graph is retained for `autograd.grad` after the backward.
import torch


def train(critic, loader, critic_opt):
    for real in loader:
        real.requires_grad_(True)
        critic_opt.zero_grad()
        score = critic(real).mean()
        score.backward(retain_graph=True)
        (grad,) = torch.autograd.grad(score, real, create_graph=True)
        penalty = ((grad.norm(2, dim=1) - 1) ** 2).mean()
        penalty.backward()
        critic_opt.step()
