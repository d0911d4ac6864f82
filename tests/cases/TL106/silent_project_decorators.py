# Decorators of the project that turn gradients off: a factory returning `no_grad()` or
# `inference_mode()` (chosen by version), and a wrapper that calls the function under one.
import functools

import torch


def smart_inference_mode(new_torch=True):
    def decorate(fn):
        return (torch.inference_mode if new_torch else torch.no_grad)()(fn)

    return decorate


def without_grad(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with torch.no_grad():
            return fn(*args, **kwargs)

    return wrapper


@smart_inference_mode()
def validate(model, loader):
    model.eval()
    for x in loader:
        model(x)


@without_grad
def predict(model, loader):
    model.eval()
    return [model(x) for x in loader if x is not None]


@without_grad
def score(model, batches):
    model.eval()
    for x in batches:
        model(x)
