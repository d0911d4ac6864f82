"""A decoder that returns log-probabilities, trained with cross_entropy (log-softmax twice)."""
import torch
import torch.nn.functional as F
from torch import nn


class Decoder(nn.Module):
    def __init__(self, vocab_size, hidden=64):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, hidden)
        self.gru = nn.GRU(hidden, hidden, batch_first=True)
        self.out = nn.Linear(hidden, vocab_size)

    def forward(self, tokens):
        states, _ = self.gru(self.embed(tokens))
        return F.log_softmax(self.out(states), dim=-1)


vocab_size = 100
model = Decoder(vocab_size)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(500):
    tokens = torch.randint(0, vocab_size, (8, 12))
    output = model(tokens[:, :-1])
    loss = F.nll_loss(output.reshape(-1, vocab_size), tokens[:, 1:].reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
