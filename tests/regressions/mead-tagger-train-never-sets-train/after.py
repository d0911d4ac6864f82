"""Trainer subclass: _test() puts self.model in eval mode and _train() never switches it back."""
import torch
import torch.nn.functional as F
from torch import nn


class EpochReportingTrainer:
    def train(self, ts):
        metrics = self._train(ts)
        print("train", metrics)
        return metrics

    def test(self, vs):
        metrics = self._test(vs)
        print("valid", metrics)
        return metrics


class Tagger(nn.Module):
    def __init__(self, vocab=50, dim=32, labels=5, pdrop=0.5):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.dropout = nn.Dropout(pdrop)
        self.proj = nn.Linear(dim, labels)

    def forward(self, x):
        return self.proj(self.dropout(self.embed(x)))

    def compute_loss(self, x, y):
        return F.cross_entropy(self(x).flatten(0, 1), y.flatten())


class TaggerTrainer(EpochReportingTrainer):
    def __init__(self, model, eta=0.01, clip=5.0):
        self.model = model
        self.clip = clip
        self.optimizer = torch.optim.Adam(model.parameters(), lr=eta)

    def _test(self, ts):
        self.model.eval()
        correct = total = 0
        for x, y in ts:
            correct += (self.model(x).argmax(-1) == y).sum().item()
            total += y.numel()
        return {"acc": correct / total}

    def _train(self, ts):
        self.model.train()
        total_loss = 0.0
        for x, y in ts:
            self.optimizer.zero_grad()
            loss = self.model.compute_loss(x, y)
            total_loss += loss.item()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.clip)
            self.optimizer.step()
        return {"avg_loss": total_loss / len(ts)}


def fit(model, ts, vs, epochs=5):
    trainer = TaggerTrainer(model)
    best = 0.0
    for epoch in range(epochs):
        trainer.train(ts)
        metrics = trainer.test(vs)
        if metrics["acc"] > best:
            best = metrics["acc"]
            torch.save(model.state_dict(), "/tmp/mead_tagger_demo.pt")


if __name__ == "__main__":
    def batch():
        return torch.randint(0, 50, (8, 12)), torch.randint(0, 5, (8, 12))

    fit(Tagger(), [batch() for _ in range(20)], [batch() for _ in range(4)])
