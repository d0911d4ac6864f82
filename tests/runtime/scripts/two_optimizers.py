"""Two models and two optimizers stepping in one iteration (an encoder/decoder trained with
separate optimizers)."""

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
loader = DataLoader(TensorDataset(torch.randn(128, 8), torch.randint(0, 3, (128,))), batch_size=16)
encoder = nn.Sequential(nn.Linear(8, 32), nn.ReLU())
decoder = nn.Linear(32, 3)
opt_enc = torch.optim.Adam(encoder.parameters(), lr=1e-2)  # line: opt_enc
opt_dec = torch.optim.Adam(decoder.parameters(), lr=1e-2)  # line: opt_dec
criterion = nn.CrossEntropyLoss()
for epoch in range(100):
    for x, y in loader:
        opt_enc.zero_grad()
        opt_dec.zero_grad()
        loss = criterion(decoder(encoder(x)), y)
        loss.backward()
        opt_enc.step()
        opt_dec.step()
