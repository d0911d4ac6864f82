# One model, two local names: `model = self.model` in train() and in evaluate().
import torch


class Trainer:
    def __init__(self, model, loader, val_loader):
        self.model = model
        self.loader = loader
        self.val_loader = val_loader
        self.optimizer = torch.optim.Adam(model.parameters())

    def evaluate(self):
        model = self.model
        model.eval()
        with torch.no_grad():
            for x, _ in self.val_loader:
                model(x)

    def train(self, epochs):
        model = self.model
        model.train()
        for epoch in range(epochs):
            for x, y in self.loader:
                loss = model(x).sum()
                loss.backward()
                self.optimizer.step()
                self.optimizer.zero_grad()
            self.evaluate()  # expect: TL105
