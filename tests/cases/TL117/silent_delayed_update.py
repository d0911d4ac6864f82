# A critic trained every iteration and an actor updated every `policy_delay` iterations from
# its own backward inside that block: two optimizers, no accumulation; an fp16 optimizer's
# own backward(loss).
import torch
from torch import nn


def train(actor, critic, replay, steps, policy_delay=2):
    actor_opt = torch.optim.Adam(actor.parameters(), lr=3e-4)
    critic_opt = torch.optim.Adam(critic.parameters(), lr=3e-4)
    for step in range(steps):
        obs, target = replay.sample()
        critic_loss = nn.functional.mse_loss(critic(obs), target)
        critic_opt.zero_grad()
        critic_loss.backward()
        critic_opt.step()
        if step % policy_delay == 0:
            actor_loss = -critic(actor(obs)).mean()
            actor_opt.zero_grad()
            actor_loss.backward()
            actor_opt.step()


def train_fp16(model, optimizer, loader, gradient_accumulation_steps):
    for step, (x, y) in enumerate(loader):
        loss = nn.functional.cross_entropy(model(x), y)
        optimizer.backward(loss)
        if (step + 1) % gradient_accumulation_steps == 0:
            optimizer.step()
            optimizer.zero_grad()
