import torch as th
from torch import compile as compile_model


def train(model, loader, optimizer, epochs):
    for epoch in range(epochs):
        model = th.compile(model)  # expect: TL113
        for x, y in loader:
            loss = th.nn.functional.mse_loss(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


def train_again(model, loader, optimizer, epochs):
    for epoch in range(epochs):
        model = compile_model(model, mode="max-autotune")  # expect: TL113
        for x, y in loader:
            loss = (model(x) - y).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
