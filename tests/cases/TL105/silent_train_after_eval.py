import torch


class Trainer:
    def __init__(self, model):
        self.model = model
        self.optimizer = torch.optim.AdamW(model.parameters())

    def evaluate(self, loader):
        self.model.eval()
        with torch.no_grad():
            out = [self.model(x) for x in loader]
        self.model.train()
        return out

    def fit(self, loader):
        self.model.train()
        for epoch in range(3):
            for x in loader:
                self.optimizer.zero_grad()
                self.model(x).sum().backward()
                self.optimizer.step()
            self.evaluate(loader)
