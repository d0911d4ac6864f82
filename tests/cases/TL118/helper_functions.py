# A warm-up schedule sized in steps through a variable; the epoch's batches in a helper.
import torch
from transformers import get_linear_schedule_with_warmup


def train_epoch(model, loader, optimizer):
    for batch in loader:
        optimizer.zero_grad()
        model(**batch).loss.backward()
        optimizer.step()


def main(model, train_loader, epochs):
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5)
    total_steps = len(train_loader) * epochs
    scheduler = get_linear_schedule_with_warmup(
        optimizer, num_warmup_steps=total_steps // 10, num_training_steps=total_steps
    )
    for epoch in range(epochs):
        train_epoch(model, train_loader, optimizer)
        scheduler.step()  # expect: TL118
