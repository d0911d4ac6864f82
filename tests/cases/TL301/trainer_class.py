import torch


class Trainer:
    def __init__(self, model, loader):
        self.model = model
        self.loader = loader
        self.optimizer = torch.optim.Adam(model.parameters())
        self.history = []

    def train_step(self, batch):
        self.optimizer.zero_grad()
        loss = self.model(batch).mean()
        loss.backward()
        self.optimizer.step()
        self.history.append(loss.item())  # expect: TL301

    def fit(self):
        for batch in self.loader:
            self.train_step(batch)

    def resume(self, resume_step):
        for step, batch in enumerate(self.loader):
            if step < resume_step:
                continue
            loss = self.model(batch).mean()
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            logs = {"step_loss": loss.detach().item()}  # expect: TL301
