import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader


def train_one_epoch(model, loader, optimizer, device):
    model.train()
    for step, (images, labels) in enumerate(loader):
        images, labels = images.to(device), labels.to(device)
        optimizer.zero_grad()
        F.cross_entropy(model(images), labels).backward()
        optimizer.step()


@torch.no_grad()
def evaluate(model, loader, device):
    model.eval()
    return sum((model(x.to(device)).argmax(1) == y.to(device)).sum().item() for x, y in loader)


def main(model, train_ds, val_ds, epochs=90):
    device = torch.device("cuda")
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    train_loader = DataLoader(train_ds, 128, False, num_workers=8, pin_memory=True)  # expect: TL401
    val_loader = DataLoader(val_ds, batch_size=256, num_workers=8)
    for epoch in range(epochs):
        train_one_epoch(model, train_loader, optimizer, device)
        evaluate(model, val_loader, device)
