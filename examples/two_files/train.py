"""A classifier trained with the helpers of engine.py: `python examples/two_files/train.py`."""

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from engine import evaluate, train_one_epoch


def make_data(samples, generator):
    features = torch.randn(samples, 16, generator=generator)
    targets = (features[:, :4].sum(dim=1) > 0).long()
    return TensorDataset(features, targets)


def main():
    generator = torch.Generator().manual_seed(0)
    train_loader = DataLoader(make_data(512, generator), batch_size=32, shuffle=True)
    val_loader = DataLoader(make_data(128, generator), batch_size=64)
    model = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Dropout(0.2), nn.Linear(64, 2))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    loss_fn = nn.CrossEntropyLoss()
    model.train()
    for epoch in range(5):
        train_loss = train_one_epoch(model, train_loader, optimizer, loss_fn)
        val_loss = evaluate(model, val_loader, loss_fn)
        print(f"epoch {epoch}: train {train_loss:.3f} val {val_loss:.3f}")
    print(f"final loss {val_loss:.4f}")


if __name__ == "__main__":
    main()
