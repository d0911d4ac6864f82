"""A diffusion module that turns autocast off for its noising step with the deprecated decorator."""
import torch
from torch import nn
from torch.cuda.amp import autocast


class GaussianDiffusion(nn.Module):
    def __init__(self, model, timesteps=1000):
        super().__init__()
        self.model = model
        betas = torch.linspace(1e-4, 0.02, timesteps)
        self.register_buffer("alphas_cumprod", torch.cumprod(1 - betas, dim=0))

    @autocast(enabled=False)
    def q_sample(self, x_start, t, noise):
        a = self.alphas_cumprod[t].view(-1, 1, 1, 1)
        return a.sqrt() * x_start + (1 - a).sqrt() * noise

    def forward(self, x):
        t = torch.randint(0, len(self.alphas_cumprod), (x.shape[0],), device=x.device)
        noise = torch.randn_like(x)
        return nn.functional.mse_loss(self.model(self.q_sample(x, t, noise)), noise)
