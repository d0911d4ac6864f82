# Near-misses: the same operators on the batch after it moved to the device, or combined with a
# device tensor, are device values.
import torch


def train(model, loader, optimizer, device):
    model.train()
    for batch in loader:
        batch = {k: v.to(device) for k, v in batch.items()}
        pad = ~batch["attention_mask"].bool()
        print(pad.any().item())  # expect: TL301
        out = model(**batch)
        hits = (batch["labels"] == out.logits.argmax(-1)).sum().item()  # expect: TL301
        out.loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        print(hits)
