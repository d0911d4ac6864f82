"""An actor-critic agent in CleanRL's PPO shape: two parallel three-layer branches, the critic
registered first, the actor's head initialised with std 0.01 (its gradient over its weight is
large on purpose), a clipped surrogate plus a value loss, on random observations."""

import math

import torch
from torch import nn
from torch.distributions import Categorical


def layer_init(layer: nn.Linear, std: float = math.sqrt(2)) -> nn.Linear:
    nn.init.orthogonal_(layer.weight, std)
    nn.init.constant_(layer.bias, 0.0)
    return layer


def branch(outputs: int, head_std: float) -> nn.Sequential:
    return nn.Sequential(
        layer_init(nn.Linear(4, 64)),
        nn.Tanh(),
        layer_init(nn.Linear(64, 64)),
        nn.Tanh(),
        layer_init(nn.Linear(64, outputs), std=head_std),
    )


class Agent(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.critic = branch(1, 1.0)
        self.actor = branch(2, 0.01)


torch.manual_seed(0)
agent = Agent()
optimizer = torch.optim.Adam(agent.parameters(), lr=2.5e-4, eps=1e-5)
for update in range(20):
    obs, actions = torch.randn(64, 4), torch.randint(0, 2, (64,))
    advantages, returns = torch.randn(64), torch.randn(64) * 10
    dist = Categorical(logits=agent.actor(obs))
    logprob = dist.log_prob(actions)
    ratio = (logprob - logprob.detach()).exp()
    pg_loss = torch.max(-advantages * ratio, -advantages * ratio.clamp(0.8, 1.2)).mean()
    v_loss = 0.5 * ((agent.critic(obs).view(-1) - returns) ** 2).mean()
    loss = pg_loss - 0.01 * dist.entropy().mean() + 0.5 * v_loss
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
