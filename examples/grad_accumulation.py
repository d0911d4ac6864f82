"""Gradient accumulation: an effective batch of 4 x 16 samples on a small-memory budget.

A small transformer-free sequence model (GRU) classifies synthetic sequences; the optimizer
steps once every `ACCUM_STEPS` micro-batches, with a linear warm-up / decay schedule.
"""

import math

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

MICRO_BATCH = 16
ACCUM_STEPS = 4
EPOCHS = 3
BASE_LR = 3e-3
WARMUP_STEPS = 10
SEQ_LEN, N_FEATURES, N_CLASSES = 20, 6, 3


def make_sequences(n, seed):
    g = torch.Generator().manual_seed(seed)
    labels = torch.randint(0, N_CLASSES, (n,), generator=g)
    t = torch.linspace(0, 2 * math.pi, SEQ_LEN)
    freq = (labels + 1).float()[:, None, None]
    x = torch.sin(freq * t[None, :, None]) + 0.4 * torch.randn(n, SEQ_LEN, N_FEATURES, generator=g)
    return TensorDataset(x, labels)


class GRUClassifier(nn.Module):
    def __init__(self, hidden=48):
        super().__init__()
        self.gru = nn.GRU(N_FEATURES, hidden, batch_first=True)
        self.head = nn.Linear(hidden, N_CLASSES)

    def forward(self, x):
        _, h = self.gru(x)
        return self.head(h[-1])


def lr_lambda(total_steps):
    def schedule(step):
        if step < WARMUP_STEPS:
            return (step + 1) / WARMUP_STEPS
        return max(0.0, (total_steps - step) / max(1, total_steps - WARMUP_STEPS))
    return schedule


def main():
    torch.manual_seed(0)
    train_loader = DataLoader(make_sequences(768, 0), batch_size=MICRO_BATCH, shuffle=True)
    model = GRUClassifier()
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.AdamW(model.parameters(), lr=BASE_LR, weight_decay=0.01)
    total_steps = EPOCHS * len(train_loader)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lr_lambda(total_steps))

    global_step = 0
    for epoch in range(EPOCHS):
        model.train()
        optimizer.zero_grad()
        running_loss = 0.0
        for step, (inputs, labels) in enumerate(train_loader):
            logits = model(inputs)
            loss = criterion(logits, labels) / ACCUM_STEPS
            loss.backward()
            running_loss += loss.item()

            if (step + 1) % ACCUM_STEPS == 0:
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                optimizer.step()
                optimizer.zero_grad()
                global_step += 1
            scheduler.step()

            if (step + 1) % (ACCUM_STEPS * 4) == 0:
                print(f"epoch {epoch} update {global_step:3d} "
                      f"lr {scheduler.get_last_lr()[0]:.2e} loss {running_loss / 4:.4f}")
                running_loss = 0.0

    print(f"final loss {loss.item() * ACCUM_STEPS:.4f}")


if __name__ == "__main__":
    main()
