"""A reusable `Trainer` class with mixed precision, gradient clipping and checkpointing.

Classifies synthetic 32-dimensional feature vectors into 5 classes with a residual MLP.
Mixed precision switches itself on when a GPU is present.
"""

import os
import tempfile

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class ResidualBlock(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.ff = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))

    def forward(self, x):
        return x + self.ff(self.norm(x))


class ResMLP(nn.Module):
    def __init__(self, in_dim=32, dim=64, depth=3, num_classes=5):
        super().__init__()
        self.stem = nn.Linear(in_dim, dim)
        self.blocks = nn.Sequential(*[ResidualBlock(dim) for _ in range(depth)])
        self.head = nn.Linear(dim, num_classes)

    def forward(self, x):
        return self.head(self.blocks(self.stem(x)))


class Trainer:
    def __init__(self, model, train_loader, val_loader, lr=1e-3, max_grad_norm=1.0):
        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        self.model = model.to(self.device)
        self.train_loader = train_loader
        self.val_loader = val_loader
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=lr)
        self.criterion = nn.CrossEntropyLoss()
        self.use_amp = self.device.type == "cuda"
        self.scaler = torch.cuda.amp.GradScaler(enabled=self.use_amp)
        self.max_grad_norm = max_grad_norm
        self.log_every = 20

    def train_epoch(self, epoch):
        self.model.train()
        total = torch.zeros((), device=self.device)
        for step, (x, y) in enumerate(self.train_loader):
            x, y = x.to(self.device), y.to(self.device)
            self.optimizer.zero_grad(set_to_none=True)
            with torch.cuda.amp.autocast(enabled=self.use_amp):
                loss = self.criterion(self.model(x), y)
            self.scaler.scale(loss).backward()
            self.scaler.unscale_(self.optimizer)
            nn.utils.clip_grad_norm_(self.model.parameters(), self.max_grad_norm)
            self.scaler.step(self.optimizer)
            total += loss.detach()
            if step % self.log_every == 0:
                print(f"epoch {epoch} step {step:3d} loss {loss.item():.4f}")
        return (total / len(self.train_loader)).item()

    @torch.no_grad()
    def validate(self):
        self.model.eval()
        correct, seen = 0, 0
        for x, y in self.val_loader:
            x, y = x.to(self.device), y.to(self.device)
            correct += (self.model(x).argmax(1) == y).sum().item()
            seen += y.numel()
        return correct / seen

    def save_checkpoint(self, path, epoch):
        torch.save({"epoch": epoch, "model": self.model.state_dict(),
                    "optimizer": self.optimizer.state_dict(),
                    "scaler": self.scaler.state_dict()}, path)

    def fit(self, epochs):
        best = 0.0
        ckpt = os.path.join(tempfile.gettempdir(), "trainer_class_best.pt")
        for epoch in range(epochs):
            train_loss = self.train_epoch(epoch)
            acc = self.validate()
            print(f"epoch {epoch}: train loss {train_loss:.4f}, val acc {acc:.3f}")
            if acc > best:
                best = acc
                self.save_checkpoint(ckpt, epoch)
        return train_loss


def make_blobs(n, seed):
    g = torch.Generator().manual_seed(seed)
    centers = torch.randn(5, 32, generator=torch.Generator().manual_seed(42)) * 0.3
    y = torch.randint(0, 5, (n,), generator=g)
    return TensorDataset(centers[y] + torch.randn(n, 32, generator=g), y)


if __name__ == "__main__":
    torch.manual_seed(0)
    train = DataLoader(make_blobs(1600, 0), batch_size=64, shuffle=True)
    val = DataLoader(make_blobs(400, 1), batch_size=200)
    trainer = Trainer(ResMLP(), train, val)
    final = trainer.fit(epochs=3)
    print(f"final loss {final:.4f}")
