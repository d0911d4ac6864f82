"""evaluate() still relies on Variable(volatile=True), which autograd has ignored since 0.4."""
import torch
import torch.nn.functional as F
from torch import nn


def evaluate(model, val_iter, vocab_size):
    model.eval()
    total_loss = 0.0
    with torch.no_grad():
        for src, trg in val_iter:
            output = model(src)
            loss = F.nll_loss(output.view(-1, vocab_size), trg.view(-1))
            total_loss += loss.item()
    return total_loss / len(val_iter)


class Tagger(nn.Module):
    def __init__(self, vocab_size):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, 32)
        self.out = nn.Linear(32, vocab_size)

    def forward(self, src):
        return F.log_softmax(self.out(self.embed(src)), dim=-1)


if __name__ == "__main__":
    data = [(torch.randint(0, 50, (4, 7)), torch.randint(0, 50, (4, 7))) for _ in range(3)]
    print(evaluate(Tagger(50), data, 50))
