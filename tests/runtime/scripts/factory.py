"""Defines torchlint_setup(): the explicit way in. Its __main__ block would never end, so a
passing check proves it did not run."""

import time

import torch
from torch import nn
from torch.utils.data import DataLoader


def torchlint_setup():
    torch.manual_seed(0)
    data = [{"x": torch.randn(8), "y": torch.randint(0, 4, ()).item()} for _ in range(64)]
    model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 4))
    return dict(
        model=model,
        loader=DataLoader(data, batch_size=16),
        optimizer=torch.optim.Adam(model.parameters(), lr=1e-2),
        batch_fn=lambda m, b: nn.functional.cross_entropy(m(b["x"]), b["y"]),
    )


if __name__ == "__main__":
    while True:
        time.sleep(1)
