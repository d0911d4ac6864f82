"""A linear probe on frozen EEG features: OneCycleLR is sized for every batch of every epoch,
but the epoch helper steps it once, after its batch loop, so the learning rate barely moves.
Fixed: the scheduler steps after each optimizer step."""
import torch
import torch.nn.functional as F
from tqdm import tqdm


def train_epoch(model, probe, train_loader, optimizer, scheduler, device):
    probe.train()
    losses = []
    pbar = tqdm(train_loader, desc="Training")
    for batch_idx, (data, labels) in enumerate(pbar):
        data, labels = data.to(device), labels.to(device)
        with torch.no_grad():
            features = model.extract_features_batch(data)
        loss = F.cross_entropy(probe(features), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        scheduler.step()
        losses.append(loss.item())
    return sum(losses) / len(losses)


def main(model, probe, train_loader, device, config):
    optimizer = torch.optim.AdamW(probe.parameters(), lr=config["lr"])
    scheduler = torch.optim.lr_scheduler.OneCycleLR(
        optimizer,
        max_lr=config["max_lr"],
        total_steps=len(train_loader) * config["max_epochs"],
        pct_start=0.1,
    )
    for epoch in range(config["max_epochs"]):
        train_epoch(model, probe, train_loader, optimizer, scheduler, device)
