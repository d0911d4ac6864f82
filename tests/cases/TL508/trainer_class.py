# A trainer whose epoch converts the batch items by statements.
import torch
import torch.nn.functional as F


class Trainer:
    def __init__(self, model, loader, device):
        self.model = model.to(device)
        self.loader = loader
        self.device = device
        self.optimizer = torch.optim.AdamW(model.parameters())

    def train_epoch(self):
        for step, (inputs, targets) in enumerate(self.loader):
            inputs.to(self.device)  # expect: TL508
            targets.to(self.device, non_blocking=True)  # expect: TL508
            self.optimizer.zero_grad()
            F.cross_entropy(self.model(inputs), targets).backward()
            self.optimizer.step()
