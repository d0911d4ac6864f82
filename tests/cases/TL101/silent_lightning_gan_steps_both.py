# Both optimizers of a manually optimized GAN step after their own backward.
import torch
import lightning.pytorch as pl


class GAN(pl.LightningModule):
    def __init__(self, generator, discriminator):
        super().__init__()
        self.generator = generator
        self.discriminator = discriminator
        self.automatic_optimization = False

    def training_step(self, batch, batch_idx):
        opt_g, opt_d = self.optimizers()
        fake = self.generator(torch.randn(8, 16))
        opt_d.zero_grad()
        d_loss = self.discriminator(batch).mean() - self.discriminator(fake.detach()).mean()
        self.manual_backward(d_loss)
        opt_d.step()
        opt_g.zero_grad()
        self.manual_backward(-self.discriminator(fake).mean())
        opt_g.step()

    def configure_optimizers(self):
        opt_g = torch.optim.Adam(self.generator.parameters())
        opt_d = torch.optim.Adam(self.discriminator.parameters())
        return opt_g, opt_d
