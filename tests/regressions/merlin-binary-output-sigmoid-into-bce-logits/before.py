"""A recommender library's binary prediction head: a block that ends in a sigmoid and carries
its default loss, which the model's training step applies to the block's output."""
import torch
from torch import nn


class ModelOutput(nn.Sequential):
    def __init__(self, *layers, loss=None):
        super().__init__(*layers)
        self.loss = loss


class BinaryOutput(ModelOutput):
    DEFAULT_LOSS_CLS = nn.BCEWithLogitsLoss

    def __init__(self, loss=None):
        super().__init__(nn.LazyLinear(1), nn.Sigmoid(), loss=loss or self.DEFAULT_LOSS_CLS())


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(8, 16), nn.ReLU())
        self.output = BinaryOutput()

    def forward(self, features):
        return self.output(self.body(features))

    def training_step(self, batch, batch_idx):
        features, targets = batch
        predictions = self(features)
        return self.output.loss(predictions, targets)


def fit(model, loader):
    optimizer = torch.optim.Adam(model.parameters())
    for batch_idx, batch in enumerate(loader):
        optimizer.zero_grad()
        model.training_step(batch, batch_idx).backward()
        optimizer.step()
