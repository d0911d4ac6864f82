"""A detector trainer that takes GradScaler and autocast from torch.cuda.amp."""
import torch
from torch import nn
from torch.amp import GradScaler, autocast


class ModelTrainer:
    def __init__(self, model, device="cuda"):
        self.device = device
        self.model = model.to(device)
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
        self.scaler = GradScaler(device)

    def train_one_batch(self, images, targets):
        images, targets = images.to(self.device), targets.to(self.device)
        self.optimizer.zero_grad()
        with autocast(self.device):
            loss = nn.functional.mse_loss(self.model(images), targets)
        self.scaler.scale(loss).backward()
        self.scaler.step(self.optimizer)
        self.scaler.update()
        return loss.detach()

    def train_one_epoch(self, loader):
        for images, targets in loader:
            self.train_one_batch(images, targets)
