"""A diffusion model's trainer: `gradient_accumulate_every` batches are backpropagated, then one
optimizer step; the loss of each batch is not divided by that count."""
import torch


class Trainer:
    def __init__(self, diffusion_model, loader, train_lr=2e-5, train_num_steps=100000,
                 gradient_accumulate_every=2):
        self.model = diffusion_model
        self.dl = iter(loader)
        self.opt = torch.optim.Adam(diffusion_model.parameters(), lr=train_lr)
        self.train_num_steps = train_num_steps
        self.gradient_accumulate_every = gradient_accumulate_every
        self.step = 0

    def train(self):
        while self.step < self.train_num_steps:
            for i in range(self.gradient_accumulate_every):
                data = next(self.dl).cuda()
                loss = self.model(data)
                loss.backward()
            self.opt.step()
            self.opt.zero_grad()
            self.step += 1
