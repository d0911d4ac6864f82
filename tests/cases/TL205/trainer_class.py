import torch
from torch import nn


class Trainer:
    def __init__(self, model: nn.Module, loader, use_amp=True):
        self.model = model.cuda()
        self.loader = loader
        self.use_amp = use_amp
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)

    def compute_loss(self, batch):
        with torch.autocast("cuda", dtype=torch.float16, enabled=self.use_amp):
            return self.model(**batch).loss

    def train_step(self, batch):
        loss = self.compute_loss(batch)
        loss.backward()  # expect: TL205
        self.optimizer.step()
        self.optimizer.zero_grad()

    def fit(self, epochs):
        for epoch in range(epochs):
            for batch in self.loader:
                self.train_step(batch)
