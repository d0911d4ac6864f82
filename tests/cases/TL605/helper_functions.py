import torch
from accelerate import Accelerator


def evaluate(model, val_loader, accelerator):
    model.eval()
    losses = []
    for batch in val_loader:
        with torch.no_grad():
            loss = model(**batch).loss
        losses.append(accelerator.gather(loss.repeat(8)))  # expect: TL605
    return torch.cat(losses).mean()


def main(model, optimizer, train_loader, val_loader):
    accelerator = Accelerator()
    model, optimizer, train_loader, val_loader = accelerator.prepare(
        model, optimizer, train_loader, val_loader
    )
    for batch in train_loader:
        accelerator.backward(model(**batch).loss)
        optimizer.step()
        optimizer.zero_grad()
    return evaluate(model, val_loader, accelerator)
