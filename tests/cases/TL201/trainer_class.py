import torch


class AmpTrainer:
    def __init__(self, model):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        self.scaler = torch.amp.GradScaler("cuda")

    def backward(self, loss):
        loss.backward()  # expect: TL201

    def fit(self, loader):
        for batch in loader:
            self.optimizer.zero_grad()
            with torch.autocast("cuda"):
                loss = self.model(batch).mean()
            self.backward(loss)
            self.scaler.step(self.optimizer)
            self.scaler.update()
