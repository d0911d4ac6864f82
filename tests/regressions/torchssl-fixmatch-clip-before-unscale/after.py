"""A semi-supervised trainer class: with AMP on, it clips before unscaling."""
import torch
import torch.nn.functional as F
from torch import nn


class FixMatch:
    def __init__(self, model, use_amp=True, clip=1.0):
        self.model = model.cuda()
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.03, momentum=0.9)
        self.use_amp = use_amp
        self.clip = clip

    def train(self, labeled, unlabeled, iterations=1000):
        scaler = torch.amp.GradScaler("cuda", enabled=self.use_amp)
        self.model.train()
        for it, ((x, y), (weak, strong)) in enumerate(zip(labeled, unlabeled)):
            if it >= iterations:
                break
            x, y, weak, strong = x.cuda(), y.cuda(), weak.cuda(), strong.cuda()
            with torch.autocast("cuda", enabled=self.use_amp):
                sup = F.cross_entropy(self.model(x), y)
                pseudo = self.model(weak).detach().argmax(dim=1)
                unsup = F.cross_entropy(self.model(strong), pseudo)
                total_loss = sup + unsup
            if self.use_amp:
                scaler.scale(total_loss).backward()
                if self.clip > 0:
                    scaler.unscale_(self.optimizer)
                    torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.clip)
                scaler.step(self.optimizer)
                scaler.update()
            else:
                total_loss.backward()
                self.optimizer.step()
            self.model.zero_grad()


if __name__ == "__main__":
    images = [(torch.rand(8, 3, 32, 32), torch.randint(0, 10, (8,))) for _ in range(4)]
    pairs = [(torch.rand(8, 3, 32, 32), torch.rand(8, 3, 32, 32)) for _ in range(4)]
    FixMatch(nn.Sequential(nn.Flatten(), nn.Linear(3072, 10))).train(images, pairs)
