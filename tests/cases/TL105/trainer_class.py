import torch


class Trainer:
    def __init__(self, model, train_loader, val_loader):
        self.model = model
        self.train_loader = train_loader
        self.val_loader = val_loader
        self.optimizer = torch.optim.AdamW(model.parameters())

    def validate(self):
        self.model.eval()
        with torch.no_grad():
            return [self.model(x) for x in self.val_loader]

    def fit(self, epochs):
        self.model.train()
        for epoch in range(epochs):
            for step, x in enumerate(self.train_loader):
                self.optimizer.zero_grad()
                self.model(x).mean().backward()
                self.optimizer.step()
                if step % 500 == 0:
                    self.validate()  # expect: TL105
