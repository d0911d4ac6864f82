"""The fix: the optimizer is built again over the fresh posterior after the reset."""
from copy import deepcopy

import torch
from torch import nn, optim


class Posterior(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(6, 50), nn.Tanh(), nn.Linear(50, 4))

    def log_prob(self, theta, x):
        return -((self.net(x) - theta) ** 2).sum(-1)


class SNPE:
    def __init__(self, retrain_from_scratch_each_round=False):
        self._posterior = Posterior()
        self._untrained_neural_posterior = deepcopy(self._posterior)
        self._retrain_from_scratch_each_round = retrain_from_scratch_each_round

    def train(self, round_, train_loader, learning_rate=5e-4, epochs=10):
        optimizer = optim.Adam(list(self._posterior.net.parameters()), lr=learning_rate)
        if self._retrain_from_scratch_each_round and round_ > 0:
            self._posterior = deepcopy(self._untrained_neural_posterior)
            optimizer = optim.Adam(self._posterior.net.parameters(), lr=learning_rate)
        for epoch in range(epochs):
            self._posterior.net.train()
            for theta_batch, x_batch in train_loader:
                optimizer.zero_grad()
                loss = -self._posterior.log_prob(theta_batch, x_batch).mean()
                loss.backward()
                optimizer.step()
