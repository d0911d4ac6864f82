# main.py of a word-level language model, with model.py's two classes inlined: the model is
# chosen by an if/else, and the Transformer's forward ends in F.log_softmax (the bug); the loss
# is nn.CrossEntropyLoss. The output is bound in an if/else too (the RNN returns a tuple).
import argparse

import torch
import torch.nn.functional as F
from torch import nn


class RNNModel(nn.Module):
    def __init__(self, ntoken, nhid):
        super().__init__()
        self.rnn = nn.LSTM(nhid, nhid)
        self.decoder = nn.Linear(nhid, ntoken)

    def forward(self, x, hidden):
        output, hidden = self.rnn(x, hidden)
        return self.decoder(output), hidden


class TransformerModel(nn.Module):
    def __init__(self, ntoken, nhid):
        super().__init__()
        layer = nn.TransformerEncoderLayer(nhid, 2)
        self.encoder = nn.TransformerEncoder(layer, 2)
        self.decoder = nn.Linear(nhid, ntoken)

    def forward(self, x):
        output = self.decoder(self.encoder(x))
        return F.log_softmax(output, dim=-1)


parser = argparse.ArgumentParser()
parser.add_argument("--model", default="LSTM")
args = parser.parse_args()
ntokens = 1000
if args.model == "Transformer":
    model = TransformerModel(ntokens, 200)
else:
    model = RNNModel(ntokens, 200)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=20.0)


def train(batches, hidden):
    model.train()
    for data, targets in batches:
        optimizer.zero_grad()
        if args.model == "Transformer":
            output = model(data)
        else:
            output, hidden = model(data, hidden)
        loss = criterion(output.view(-1, ntokens), targets)
        loss.backward()
        optimizer.step()
