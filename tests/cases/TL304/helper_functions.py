import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader


def train_one_epoch(model, loader, optimizer, device):
    model.train()
    for inputs, targets in loader:
        inputs, targets = inputs.to(device), targets.to(device)  # expect: TL304, TL304
        optimizer.zero_grad()
        F.cross_entropy(model(inputs), targets).backward()
        optimizer.step()


def train_lm(model, loader, optimizer, device):
    for batch in loader:
        input_ids = batch["input_ids"].to(device)  # expect: TL304
        attention_mask = batch["attention_mask"].to(device, non_blocking=True)
        loss = model(input_ids=input_ids, attention_mask=attention_mask, labels=input_ids).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()


def main(model, train_ds, text_ds):
    device = torch.device("cuda:0")
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    train_loader = DataLoader(train_ds, batch_size=128, shuffle=True, num_workers=4, pin_memory=True)
    text_loader = DataLoader(text_ds, batch_size=8, shuffle=True, num_workers=2, pin_memory=True)
    for epoch in range(10):
        train_one_epoch(model, train_loader, optimizer, device)
        train_lm(model, text_loader, optimizer, device)
