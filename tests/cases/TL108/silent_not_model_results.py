"""Loops that add up values which are not a model's or a loss's result: builtins, attributes
fetched by name, the class's own helpers, metric states, features collected in `forward`."""

import torch
from torch import nn


def periods(epochs, base):
    remaining, current, targets = epochs, base, []
    while remaining > 0:
        span = min(remaining, current + 1)
        remaining -= span
        targets += [span] * span
        current *= 2
    return targets


def callback_classes(module):
    found = []
    for name in dir(module):
        attr = getattr(module, name)
        found.append(attr)
    return found


class Schedule:
    def _single(self, epochs):
        return list(range(epochs))

    def targets(self, periods):
        result = []
        for epochs in periods:
            result += self._single(epochs)
        return result


class Rouge:
    def __init__(self, reducer):
        self._reducer = reducer
        self._precision = 0.0

    def update(self, pairs):
        for candidate, reference in pairs:
            score = self._reducer(candidate, reference)
            precision = score.precision()
            self._precision += precision


class Features(nn.Module):
    def __init__(self):
        super().__init__()
        self.slices = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])

    def forward(self, x):
        outputs = []
        for slice_ in self.slices:
            x = slice_(x)
            outputs.append(x)
        return outputs


def predict(net, texts, predict_one):
    probabilities = []
    for text in texts:
        proba = predict_one(text)
        probabilities.append(proba)
    return torch.stack(probabilities)
