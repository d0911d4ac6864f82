import torch


class Trainer:
    def __init__(self, model):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        self.scaler = torch.amp.GradScaler("cuda")

    def optimizer_step(self):
        self.optimizer.step()  # expect: TL202
        self.optimizer.zero_grad()

    def fit(self, loader):
        for batch in loader:
            with torch.autocast("cuda"):
                loss = self.model(batch).mean()
            self.scaler.scale(loss).backward()
            self.optimizer_step()
            self.scaler.update()
