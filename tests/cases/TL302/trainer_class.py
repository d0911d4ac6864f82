import torch
from torch import nn


class Trainer:
    def __init__(self, model: nn.Module, loader, device="cuda"):
        self.model = model.to(device)
        self.loader = loader
        self.device = device
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)

    def on_step_end(self):
        torch.cuda.synchronize()  # expect: TL302

    def training_step(self, batch):
        batch = {k: v.to(self.device) for k, v in batch.items()}
        loss = self.model(**batch).loss
        loss.backward()
        self.optimizer.step()
        self.optimizer.zero_grad()
        self.on_step_end()
        return loss.detach()

    def fit(self, epochs):
        for epoch in range(epochs):
            for batch in self.loader:
                self.training_step(batch)
            torch.cuda.empty_cache()
