# Two optimizers: the clip after the critic's step prepares the actor's gradients for its own
# step; and a clip outside the accumulation guard acts on every micro-batch (another matter).
import torch
from torch import nn

actor, critic = nn.Linear(4, 2), nn.Linear(4, 1)
actor_opt = torch.optim.Adam(actor.parameters())
critic_opt = torch.optim.Adam(critic.parameters())
for i, x in enumerate([torch.randn(2, 4)]):
    actor_opt.zero_grad()
    critic_opt.zero_grad()
    (critic(x).mean() + actor(x).mean()).backward()
    critic_opt.step()
    nn.utils.clip_grad_norm_(actor.parameters(), 0.5)
    actor_opt.step()
    if (i + 1) % 4 == 0:
        critic_opt.step()
        critic_opt.zero_grad()
    nn.utils.clip_grad_norm_(critic.parameters(), 0.5)
