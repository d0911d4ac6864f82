"""REINFORCE on gymnasium's CartPole: the loss comes from the policy's own actions."""

import gymnasium as gym
import torch
from torch import nn

torch.manual_seed(0)
env = gym.make("CartPole-v1")
policy = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 2))
optimizer = torch.optim.Adam(policy.parameters(), lr=1e-2)
for episode in range(300):
    state, _ = env.reset(seed=episode)
    log_probs, rewards = [], []
    for _ in range(200):
        dist = torch.distributions.Categorical(logits=policy(torch.as_tensor(state)))
        action = dist.sample()
        log_probs.append(dist.log_prob(action))
        state, reward, done, truncated, _ = env.step(action.item())
        rewards.append(reward)
        if done or truncated:
            break
    returns = torch.tensor([sum(rewards[i:]) for i in range(len(rewards))])
    loss = -(torch.stack(log_probs) * (returns - returns.mean())).sum()
    optimizer.zero_grad()
    loss.backward()  # line: backward
    optimizer.step()
