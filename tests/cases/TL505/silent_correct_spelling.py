import torch

weights = torch.zeros(3)
weights.requires_grad = True
bias = torch.zeros(3).requires_grad_(True)
flags = {"require_grad": False}


def configure(args):
    args.require_grad = True
    return args
