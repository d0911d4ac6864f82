import torch
import torch.nn.functional as F


def compute_loss(model, batch):
    x, y = batch
    return F.cross_entropy(model(x), y)


def backward_pass(loss):
    loss.backward()  # expect: TL101


def train_one_epoch(model, loader, opt):
    model.train()
    for batch in loader:
        opt.zero_grad()
        loss = compute_loss(model, batch)
        backward_pass(loss)


def main():
    model = torch.nn.Linear(4, 3)
    opt = torch.optim.Adam(model.parameters())
    for epoch in range(2):
        train_one_epoch(model, [], opt)
