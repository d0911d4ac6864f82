import torch
import torch.nn.functional as F


def train_one_epoch(model, loader, optimizer, device):
    model.train()
    epoch_loss = 0.0
    for images, masks in loader:
        images, masks = images.to(device), masks.to(device)
        optimizer.zero_grad()
        logits = model(images)
        loss = F.binary_cross_entropy_with_logits(logits, masks)
        loss.backward()
        optimizer.step()
        epoch_loss = epoch_loss + loss  # expect: TL108
    return epoch_loss / len(loader)


def train(model, loader, epochs):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    curve = []
    for epoch in range(epochs):
        for x, y in loader:
            pred = model(x)
            loss = F.mse_loss(pred, y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            curve.append(loss)  # expect: TL108
    return curve


def main(model, loader):
    device = torch.device("cuda")
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for epoch in range(5):
        avg = train_one_epoch(model, loader, optimizer, device)
        print(epoch, avg.item())
