import torch
from torch import nn
from torch.utils.data import DataLoader


class Trainer:
    def __init__(self, model: nn.Module, train_ds, device="cuda"):
        self.device = torch.device(device)
        self.model = model.to(self.device)
        self.train_loader = DataLoader(
            train_ds, batch_size=64, shuffle=True, num_workers=4, pin_memory=True, persistent_workers=True
        )
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)

    def train_epoch(self):
        self.model.train()
        for x, y in self.train_loader:
            x = x.to(self.device)  # expect: TL304
            y = y.to(self.device, non_blocking=True)
            loss = nn.functional.mse_loss(self.model(x), y)
            self.optimizer.zero_grad(set_to_none=True)
            loss.backward()
            self.optimizer.step()

    def fit(self, epochs):
        for epoch in range(epochs):
            self.train_epoch()
