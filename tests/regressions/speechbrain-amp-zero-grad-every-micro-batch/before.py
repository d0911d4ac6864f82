import torch


class Brain:
    """A training loop object: fit_batch() runs once per batch and steps every
    grad_accumulation_factor batches (the AMP branch)."""

    def __init__(self, modules, optimizer, grad_accumulation_factor=4):
        self.modules = modules
        self.optimizer = optimizer
        self.grad_accumulation_factor = grad_accumulation_factor
        self.scaler = torch.cuda.amp.GradScaler()
        self.step = 0

    def compute_objectives(self, batch):
        inputs, targets = batch
        return torch.nn.functional.cross_entropy(self.modules(inputs), targets)

    def fit_batch(self, batch):
        should_step = self.step % self.grad_accumulation_factor == 0
        self.optimizer.zero_grad()
        with torch.autocast("cuda"):
            loss = self.compute_objectives(batch)
        self.scaler.scale(loss / self.grad_accumulation_factor).backward()
        if should_step:
            self.scaler.unscale_(self.optimizer)
            self.scaler.step(self.optimizer)
            self.scaler.update()
        return loss.detach().cpu()

    def fit(self, train_set, epochs):
        for epoch in range(epochs):
            for batch in train_set:
                self.step += 1
                self.fit_batch(batch)
