import torch
from torch import nn


class Trainer:
    def __init__(self, model: nn.Module, loader, max_grad_norm=1.0):
        self.model = model.cuda()
        self.loader = loader
        self.max_grad_norm = max_grad_norm
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
        self.scaler = torch.amp.GradScaler("cuda")

    def backward(self, loss):
        self.scaler.scale(loss).backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.max_grad_norm)  # expect: TL203

    def optimizer_step(self):
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.optimizer.zero_grad()

    def train_epoch(self):
        for batch in self.loader:
            with torch.autocast("cuda"):
                loss = self.model(**batch).loss
            self.backward(loss)
            self.optimizer_step()

    def fit(self, epochs):
        for epoch in range(epochs):
            self.model.train()
            self.train_epoch()
