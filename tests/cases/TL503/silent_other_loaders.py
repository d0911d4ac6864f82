import json
import pickle

import numpy as np
import torch


def load(path):
    with open(path) as handle:
        return json.load(handle)


def restore(torch, path):
    return torch.load(path)


config = load("config.json")
scripted = torch.jit.load("model.ts")
hub_model = torch.hub.load("pytorch/vision", "resnet18")
array = np.load("features.npy")
with open("cache.pkl", "rb") as handle:
    cache = pickle.load(handle)
