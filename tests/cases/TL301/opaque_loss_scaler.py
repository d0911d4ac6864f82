import math
import sys


def train_one_epoch(model, criterion, loader, optimizer, loss_scaler, log_writer=None):
    model.train()
    for step, (samples, targets) in enumerate(loader):
        outputs = model(samples)
        loss = criterion(outputs, targets)
        loss_value = loss.item()  # expect: TL301
        if not math.isfinite(loss_value):
            sys.exit(1)
        optimizer.zero_grad()
        loss_scaler(loss, optimizer, parameters=model.parameters())
        if not log_writer.distributed:
            log_writer.update(loss=loss.item())  # expect: TL301
        print("[%d] loss: %.4f" % (step, loss))  # expect: TL301
