import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader


def train_one_epoch(model, loader, optimizer, device):
    model.train()
    for batch in loader:
        inputs, targets = batch["image"].to(device), batch["mask"].to(device)
        optimizer.zero_grad()
        loss = F.binary_cross_entropy_with_logits(model(inputs), targets)
        loss.backward()
        optimizer.step()


@torch.no_grad()
def evaluate(model, loader, device):
    model.eval()
    return sum(F.binary_cross_entropy_with_logits(model(b["image"].to(device)), b["mask"].to(device)).item() for b in loader)


def main(model, train_ds, val_ds, epochs=50):
    device = torch.device("cuda")
    train_loader = DataLoader(  # expect: TL303
        train_ds,
        batch_size=16,
        shuffle=True,
        num_workers=0,
        pin_memory=True,
    )
    val_loader = DataLoader(val_ds, batch_size=16)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    for epoch in range(epochs):
        train_one_epoch(model, train_loader, optimizer, device)
        print(epoch, evaluate(model, val_loader, device))
