import torch
import torch.nn.functional as F


def make_targets(batch_size, value, device):
    return torch.full((batch_size,), value).to(device)  # expect: TL305


def sinusoidal_positions(seq_len, dim, device):
    pos = torch.arange(seq_len).to(device).unsqueeze(1)  # expect: TL305
    freqs = torch.exp(torch.arange(0, dim, 2, device=device) * (-9.21 / dim))
    return torch.cat([torch.sin(pos * freqs), torch.cos(pos * freqs)], dim=1)


def train_one_epoch(model, loader, optimizer, device):
    for tokens in loader:
        tokens = tokens.to(device)
        positions = sinusoidal_positions(tokens.size(1), 64, device)
        scores = model(tokens, positions)
        targets = make_targets(tokens.size(0), 1.0, device)
        loss = F.binary_cross_entropy_with_logits(scores, targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
