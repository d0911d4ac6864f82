import torch


class Trainer:
    def __init__(self, model):
        self.model = model
        self.optimizer = torch.optim.AdamW(model.parameters())

    def train_step(self, batch):
        self.optimizer.zero_grad()
        self.model(batch).sum().backward()
        self.optimizer.step()

    def fit(self, loader):
        for batch in loader:
            self.train_step(batch)
