# The epoch loop evaluates, and the next epoch's training function sets the mode back with an
# argument (`model.train(True)`, `model.train(mode)`): its forward is a training forward.
import torch


def train_one_epoch(model, loader, loss_scaler, optimizer, mode=True):
    model.train(mode)
    for x in loader:
        loss = model(x).mean()
        loss_scaler(loss, optimizer, parameters=model.parameters())


def evaluate(model, loader):
    model.eval()
    with torch.no_grad():
        for x in loader:
            model(x)


def main(model, loader, loss_scaler, optimizer):
    for epoch in range(10):
        train_one_epoch(model, loader, loss_scaler, optimizer)
        evaluate(model, loader)
        model.train(True)
        for x in loader:
            model(x).mean()
