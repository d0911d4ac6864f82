import deepspeed
import torch


def checkpoint(model, path):
    torch.save(model.state_dict(), path)


def forward(block, x):
    return deepspeed.checkpointing.checkpoint(block, x)


checkpoint(torch.nn.Linear(2, 2), "model.pt")
