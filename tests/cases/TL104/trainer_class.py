import torch


class Trainer:
    def __init__(self, model):
        self.model = model
        self.opt = torch.optim.AdamW(model.parameters())

    def run(self, loader):
        for batch in loader:
            self.opt.step()  # expect: TL104
            self.opt.zero_grad()
            self.model(batch).sum().backward()
