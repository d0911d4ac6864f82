import argparse

import torch
import torch.nn.functional as F
from torch import nn


class RecurrentLM(nn.Module):
    def __init__(self, vocab: int) -> None:
        super().__init__()
        self.rnn = nn.GRU(64, 64)
        self.head = nn.Linear(64, vocab)

    def forward(self, x, hidden):
        out, hidden = self.rnn(x, hidden)
        return self.head(out), hidden


class AttentionLM(nn.Module):
    def __init__(self, vocab: int) -> None:
        super().__init__()
        self.body = nn.TransformerEncoder(nn.TransformerEncoderLayer(64, 2), 2)
        self.head = nn.Linear(64, vocab)

    def forward(self, x):
        return F.log_softmax(self.head(self.body(x)), dim=-1)


parser = argparse.ArgumentParser()
parser.add_argument("--arch", default="rnn")
args = parser.parse_args()
if args.arch == "attention":
    model = AttentionLM(1000)
else:
    model = RecurrentLM(1000)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=1.0)
batches = [(torch.randn(35, 8, 64), torch.randint(0, 1000, (35 * 8,)))] * 4


def train(hidden):
    for x, y in batches:
        optimizer.zero_grad()
        if args.arch == "attention":
            output = model(x)
        else:
            output, hidden = model(x, hidden)
        loss = criterion(output.view(-1, 1000), y)  # expect: TL109
        loss.backward()
        optimizer.step()


def train_attention_only():
    for x, y in batches:
        optimizer.zero_grad()
        loss = criterion(model(x).view(-1, 1000), y)  # expect: TL109
        loss.backward()
        optimizer.step()
