"""A keypoint trainer whose helper steps the optimizer but never clears gradients."""
import torch
from torch import nn


def train(model, loader, optimizer, criterion, device, max_iters=1000):
    model.train()
    losses = []
    for iter_id, (images, heatmaps) in enumerate(loader):
        out = model(images.to(device))
        loss = criterion(out, heatmaps.to(device))
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())
        if iter_id > max_iters:
            break
    return torch.stack(losses).mean()


if __name__ == "__main__":
    net = nn.Sequential(nn.Conv2d(3, 15, 3, padding=1))
    data = [(torch.rand(2, 3, 64, 64), torch.rand(2, 15, 64, 64)) for _ in range(4)]
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    for epoch in range(10):
        train(net, data, opt, nn.MSELoss(), "cpu")
