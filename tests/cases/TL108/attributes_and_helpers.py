import torch


def compute_loss(model, batch):
    return model(**batch).loss


def train(model, loader, optimizer):
    total_loss, stats = 0.0, {"loss": 0.0}
    for batch in loader:
        outputs = model(**batch)
        loss = outputs.loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        total_loss += loss  # expect: TL108
        other = compute_loss(model, batch)
        other.backward()
        stats["loss"] += other  # expect: TL108
    return total_loss, stats
