# The float16 forward and the bare backward sit in opposite branches of the same test: the
# autocast path always goes through the scaler, the other path has no autocast.
import torch


def train_one_epoch(model, loader, optimizer, criterion, loss_scaler=None):
    for samples, targets in loader:
        if loss_scaler is None:
            loss = criterion(model(samples.half()), targets)
        else:
            with torch.autocast("cuda", dtype=torch.float16):
                loss = criterion(model(samples), targets)
        if loss_scaler is None:
            loss.backward()
            optimizer.step()
        else:
            loss_scaler(loss, optimizer)
        optimizer.zero_grad()
