import torch
from lightning.pytorch import LightningModule


class GAN(LightningModule):
    def __init__(self, generator, discriminator):
        super().__init__()
        self.generator = generator
        self.discriminator = discriminator

    def training_step(self, batch, batch_idx):
        opt_g, opt_d = self.optimizers()
        fake = self.generator(torch.randn(batch.shape[0], 64, device=self.device))
        loss_d = self.discriminator(fake.detach()).mean() - self.discriminator(batch).mean()
        loss_d.backward()  # expect: TL603
        opt_d.step()  # expect: TL603
        return -self.discriminator(fake).mean()

    def configure_optimizers(self):
        return (
            torch.optim.Adam(self.generator.parameters(), lr=2e-4),
            torch.optim.Adam(self.discriminator.parameters(), lr=2e-4),
        )
