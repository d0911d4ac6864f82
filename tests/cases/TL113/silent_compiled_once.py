import torch


class Trainer:
    def __init__(self, model, loader):
        self.model = model
        self.loader = loader
        self._compiled = None
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

    def fit(self, epochs):
        for epoch in range(epochs):
            if self._compiled is None:
                self._compiled = torch.compile(self.model)
            for batch in self.loader:
                loss = self._compiled(batch).mean()
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()


def train(model, loader, optimizer):
    model = torch.compile(model)
    for batch in loader:
        loss = model(batch).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
