import torch


class Trainer:
    def __init__(self, model, loader):
        self.model = model
        self.loader = loader
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

    def backward(self, loss):
        loss.backward()

    def fit(self):
        for batch in self.loader:
            loss = self.model(batch).mean()
            self.backward(loss)
            self.model.zero_grad()  # expect: TL103
            self.optimizer.step()
