# A trainer that accumulates `gradient_accumulate_every` batches per step.
import torch


class Trainer:
    def __init__(self, diffusion, loader, train_num_steps, gradient_accumulate_every=2):
        self.model = diffusion
        self.dl = iter(loader)
        self.opt = torch.optim.Adam(diffusion.parameters(), lr=2e-5)
        self.train_num_steps = train_num_steps
        self.gradient_accumulate_every = gradient_accumulate_every

    def train(self):
        step = 0
        while step < self.train_num_steps:
            for i in range(self.gradient_accumulate_every):
                data = next(self.dl)
                loss = self.model(data)
                loss.backward()  # expect: TL117
            self.opt.step()
            self.opt.zero_grad()
            step += 1
