"""A progressive GAN's critic iterations: each builds fresh fakes and a fresh loss, yet keeps its
graph (the generator's included) with retain_graph=True after the only backward.
Fixed: a plain backward (and the fakes detached)."""
import torch


class ProGAN:
    def __init__(self, gen, dis, n_critic=1, drift=0.001):
        self.gen, self.dis = gen, dis
        self.n_critic, self.drift = n_critic, drift
        self.dis_optim = torch.optim.Adam(dis.parameters(), lr=1e-3, betas=(0, 0.99))
        self.gen_optim = torch.optim.Adam(gen.parameters(), lr=1e-3, betas=(0, 0.99))

    def optimize_discriminator(self, noise, real_samples, depth, alpha):
        loss_val = 0
        for _ in range(self.n_critic):
            fake_samples = self.gen(noise, depth, alpha).detach()
            fake_out = self.dis(fake_samples, depth, alpha)
            real_out = self.dis(real_samples, depth, alpha)
            loss = torch.mean(fake_out) - torch.mean(real_out) + self.drift * torch.mean(real_out**2)
            self.dis_optim.zero_grad()
            loss.backward()
            self.dis_optim.step()
            loss_val += loss.item()
        return loss_val / self.n_critic
