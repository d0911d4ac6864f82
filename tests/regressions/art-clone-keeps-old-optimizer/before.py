"""A classifier wrapper that can hand out an untrained copy of itself for refitting from
scratch; the copy's training loop steps the optimizer it was given."""
import copy

import torch
from torch import nn


class Classifier:
    def __init__(self, model, loss, optimizer=None):
        self.model = model
        self._loss = loss
        self._optimizer = optimizer

    def fit(self, loader, nb_epochs=1):
        self.model.train()
        for _ in range(nb_epochs):
            for x, y in loader:
                self._optimizer.zero_grad()
                self._loss(self.model(x), y).backward()
                self._optimizer.step()

    def reset(self):
        for module in self.model.modules():
            if hasattr(module, "reset_parameters"):
                module.reset_parameters()

    def clone_for_refitting(self):
        model = copy.deepcopy(self.model)
        clone = type(self)(model, self._loss, optimizer=self._optimizer)
        clone.reset()
        return clone


if __name__ == "__main__":
    net = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
    original = Classifier(net, nn.CrossEntropyLoss(), torch.optim.SGD(net.parameters(), lr=0.1))
    batches = [(torch.randn(4, 8), torch.randint(0, 2, (4,))) for _ in range(3)]
    original.clone_for_refitting().fit(batches)
