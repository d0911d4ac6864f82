import torch


@torch.no_grad()
def sample(generator, steps, device):
    images = []
    for _ in range(steps):
        z = torch.randn(16, 100).to(device)
        images.append(generator(z).cpu())
    return images


def train(model, loader, optimizer):
    for x, y in loader:
        weights = torch.ones(x.size(0)).to(torch.float16)
        loss = (torch.nn.functional.mse_loss(model(x), y, reduction="none").mean(1) * weights).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
