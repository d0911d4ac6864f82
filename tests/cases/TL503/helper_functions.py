import pickle

from torch import load


def load_checkpoint(path, model, optimizer=None):
    checkpoint = load(  # expect: TL503
        path,
        map_location="cpu",
    )
    model.load_state_dict(checkpoint["model"])
    if optimizer is not None:
        optimizer.load_state_dict(checkpoint["optimizer"])
    return checkpoint.get("epoch", 0)


def load_legacy(path):
    return load(path, None, pickle)  # expect: TL503


def load_any(*args):
    return load(*args)  # expect: TL503
