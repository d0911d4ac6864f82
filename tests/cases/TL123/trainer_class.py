from copy import deepcopy

import torch
from torch import nn


class Posterior(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4, 32), nn.Tanh(), nn.Linear(32, 2))

    def forward(self, x):
        return self.net(x)


class Inference:
    def __init__(self, retrain_from_scratch=True):
        self._posterior = Posterior()
        self._untrained = deepcopy(self._posterior)
        self._retrain = retrain_from_scratch

    def train_round(self, round_, loader, lr=5e-4):
        optimizer = torch.optim.Adam(list(self._posterior.net.parameters()), lr=lr)
        if self._retrain and round_ > 0:
            self._posterior = deepcopy(self._untrained)  # expect: TL123
        for theta, x in loader:
            optimizer.zero_grad()
            loss = -self._posterior(x).log_softmax(-1)[:, 0].mean()
            loss.backward()
            optimizer.step()
