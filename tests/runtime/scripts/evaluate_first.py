"""A language-model loop in the shape of nanoGPT's: no DataLoader (`get_batch` draws from a
token tensor), and an evaluation of both splits under `torch.no_grad()` before the first
training step and every 50 steps, each split named by the loop's variable. `--shift 1` moves every target up by one, so the largest token is a class the
output does not have; `--bad-index` crashes with an IndexError of the script's own, outside
any loss."""

import argparse

import torch
from torch import nn
from torch.nn import functional as F

parser = argparse.ArgumentParser()
parser.add_argument("--shift", type=int, default=0)
parser.add_argument("--bad-index", action="store_true")
args = parser.parse_args()
torch.manual_seed(0)
vocab, block = 8, 6
data = torch.arange(400) % vocab


def get_batch(split: str = "train") -> tuple[torch.Tensor, torch.Tensor]:
    part = data[:300] if split == "train" else data[300:]
    i = torch.randint(0, len(part) - block - 1, (4,))
    x = torch.stack([part[j : j + block] for j in i])
    y = torch.stack([part[j + 1 : j + 1 + block] for j in i]) + args.shift
    return x, y


class Tiny(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, 16)
        self.head = nn.Linear(16, vocab)

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        logits = self.head(self.embed(x))
        return F.cross_entropy(logits.view(-1, vocab), y.view(-1))  # line: loss


@torch.no_grad()
def estimate_loss() -> dict[str, float]:
    out = {}
    model.eval()
    for split in ["train", "val"]:
        losses = [model(*get_batch(split)).item() for _ in range(2)]  # line: evaluation
        out[split] = sum(losses) / len(losses)
    model.train()
    return out


model = Tiny()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
for step in range(300):
    if step % 50 == 0:
        print(f"step {step}: val {estimate_loss()['val']:.3f}")
        if args.bad_index:
            print(data[len(data) + step])  # line: bad index
    loss = model(*get_batch())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
