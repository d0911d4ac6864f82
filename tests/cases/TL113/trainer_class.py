import torch


class Trainer:
    def __init__(self, model, loader):
        self.model = model
        self.loader = loader
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

    def fit(self, epochs):
        step = 0
        while step < epochs * len(self.loader):
            self.model = torch.compile(self.model)  # expect: TL113
            for batch in self.loader:
                loss = self.model(batch).mean()
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
                step += 1
