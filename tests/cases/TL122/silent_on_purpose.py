# Train mode without gradients on purpose: batch-norm statistics recomputed, Monte Carlo
# dropout; and a validation loop that sets eval mode after a train() call.
import torch
from torch import nn

model = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.Dropout(0.2), nn.Linear(8, 2))
val_loader = [torch.randn(8, 4) for _ in range(4)]


@torch.no_grad()
def update_bn_statistics(model, val_loader):
    for x in val_loader:
        model.train()
        model(x)


@torch.no_grad()
def mc_dropout_predict(model, test_loader, samples=10):
    outputs = []
    for x in test_loader:
        model.train()
        outputs.append(torch.stack([model(x) for _ in range(samples)]).mean(0))
    return outputs


@torch.no_grad()
def validate(model, val_loader):
    for x in val_loader:
        model.train()
        model.eval()
        model(x)
