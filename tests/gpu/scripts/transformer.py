"""A small transformer language model on CUDA: random tokens from a pinned DataLoader."""

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
device = torch.device("cuda")
VOCAB, WIDTH, LENGTH = 2048, 256, 128


class TinyLM(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCAB, WIDTH)
        layer = nn.TransformerEncoderLayer(WIDTH, 4, 4 * WIDTH, batch_first=True)
        self.blocks = nn.TransformerEncoder(layer, 4)
        self.head = nn.Linear(WIDTH, VOCAB)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        mask = nn.Transformer.generate_square_subsequent_mask(tokens.shape[1], device=tokens.device)
        return self.head(self.blocks(self.embed(tokens), mask=mask, is_causal=True))


tokens = torch.randint(0, VOCAB, (2048, LENGTH + 1))
loader = DataLoader(TensorDataset(tokens), batch_size=32, shuffle=True, pin_memory=True)
model = TinyLM().to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, fused=True)
for _epoch in range(100):
    for (batch,) in loader:
        batch = batch.to(device, non_blocking=True)
        logits = model(batch[:, :-1])
        loss = nn.functional.cross_entropy(logits.reshape(-1, VOCAB), batch[:, 1:].reshape(-1))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
