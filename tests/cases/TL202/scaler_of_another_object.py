"""A scaled backward inside another object's method (an accelerator, an engine) uses that
object's scaler, and its prepared optimizer steps through it: nothing to report. A helper
that is handed the loop's own scaler is the loop's scaled backward."""

import torch


class Engine:
    def __init__(self):
        self.scaler = torch.amp.GradScaler("cuda")

    def backward(self, loss):
        self.scaler.scale(loss).backward()

    def prepare(self, optimizer):
        return optimizer


def train_with_engine(model, loader, optimizer):
    engine = Engine()
    optimizer = engine.prepare(optimizer)
    for x, y in loader:
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        engine.backward(loss)
        optimizer.step()


def scaled_backward(loss, scaler):
    scaler.scale(loss).backward()


def train_with_helper(model, loader, optimizer):
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        scaled_backward(loss, scaler)
        optimizer.step()  # expect: TL202
