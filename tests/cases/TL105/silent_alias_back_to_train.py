# Near-misses of an alias: the evaluation aliases another attribute (the EMA copy), or the
# training loop's own alias is switched back to train mode each epoch.
import torch


class Trainer:
    def __init__(self, model, ema, loader, val_loader):
        self.model = model
        self.ema = ema
        self.loader = loader
        self.val_loader = val_loader
        self.optimizer = torch.optim.Adam(model.parameters())

    def evaluate(self):
        model = self.ema
        model.eval()
        with torch.no_grad():
            for x, _ in self.val_loader:
                model(x)

    def validate(self):
        model = self.model
        model.eval()
        with torch.no_grad():
            for x, _ in self.val_loader:
                model(x)

    def train(self, epochs):
        model = self.model
        for epoch in range(epochs):
            model.train()
            for x, y in self.loader:
                loss = model(x).sum()
                loss.backward()
                self.optimizer.step()
                self.optimizer.zero_grad()
            self.evaluate()
            self.validate()
