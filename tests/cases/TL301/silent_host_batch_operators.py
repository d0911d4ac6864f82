# Fields of the loader's batch read before the batch moves to the device are CPU tensors, and so
# is whatever operators, comparisons and tensor methods make of them: no device sync.
import torch


def train(model, loader, optimizer, device):
    model.train()
    for batch in loader:
        pad = ~batch["attention_mask"].bool()
        if pad.any().item():
            n_pad = pad.sum().item()
            print(n_pad)
        n_tokens = (batch["labels"] != -100).sum().item()
        scale = (batch["weights"] * 2).mean().item()
        batch = {k: v.to(device) for k, v in batch.items()}
        loss = model(**batch).loss * scale / n_tokens
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
