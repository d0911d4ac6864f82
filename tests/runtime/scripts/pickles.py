"""A script that saves, pickles, copies and reloads its model, optimizer and scheduler while it
trains (an EMA copy, a checkpoint of the whole module, a snapshot sent elsewhere), before and
after the instrumentation's first step. It fails loudly if anything of torchlint's is reachable
from what it saves: `torch.save(model)` used to pickle the capture's hooks."""

import copy
import io
import pickle

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
train = DataLoader(TensorDataset(torch.randn(64, 4), torch.randint(0, 2, (64,))), batch_size=8)
val = DataLoader(TensorDataset(torch.randn(16, 4), torch.randint(0, 2, (16,))), batch_size=8)
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=100)
HOOKS = ("_forward_pre_hooks", "_forward_hooks", "_backward_hooks", "_backward_pre_hooks")


def no_hooks(module):
    for sub in module.modules():
        for name in HOOKS:
            assert not getattr(sub, name), (type(sub).__name__, name, getattr(sub, name))


def check_pickling():
    blob = pickle.dumps(model)
    assert b"torchlint" not in blob
    no_hooks(pickle.loads(blob))
    ema = copy.deepcopy(model)
    no_hooks(ema)
    ema(torch.randn(2, 4))
    buffer = io.BytesIO()
    torch.save(model, buffer)
    assert b"torchlint" not in buffer.getvalue()
    torch.save(model, "whole_model.pt")
    loaded = torch.load("whole_model.pt", weights_only=False)
    no_hooks(loaded)
    assert all(torch.equal(a, b) for a, b in zip(loaded.parameters(), model.parameters()))
    torch.save(optimizer, "optimizer.pt")
    assert b"torchlint" not in pickle.dumps(optimizer)
    torch.load("optimizer.pt", weights_only=False)
    state = pickle.loads(pickle.dumps(scheduler.state_dict()))
    assert state["step_size"] == 100
    copy.deepcopy(optimizer.state_dict())


step = 0
for epoch in range(1000):
    model.train()
    for x, y in train:
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        scheduler.step()
        step += 1
        if step in (1, 2, 9):
            check_pickling()
    model.eval()
    with torch.no_grad():
        for x, y in val:
            nn.functional.cross_entropy(model(x), y)
    check_pickling()
