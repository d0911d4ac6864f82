import torch
from torch import nn


class Trainer:
    def __init__(self, model: nn.Module, loader, amp_dtype=torch.bfloat16):
        self.model = model
        self.loader = loader
        self.amp_dtype = amp_dtype
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)

    def train_step(self, batch):
        with torch.autocast(device_type="cuda", dtype=self.amp_dtype):
            outputs = self.model(**batch)
            self.backward(outputs.loss)
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)

    def backward(self, loss):
        loss.backward()  # expect: TL206

    def fit(self, epochs):
        for epoch in range(epochs):
            for batch in self.loader:
                self.train_step(batch)
