import torch
from pytorch_lightning import LightningModule


class GanSystem(LightningModule):
    """A speech-enhancement GAN with automatic optimization: optimizer 0 trains the
    discriminator, optimizer 1 the generator."""

    def __init__(self, generator, discriminator, d_loss, g_loss, lr=1e-4):
        super().__init__()
        self.generator = generator
        self.discriminator = discriminator
        self.d_loss = d_loss
        self.g_loss = g_loss
        self.lr = lr

    def forward(self, x):
        return self.generator(x)

    def training_step(self, batch, batch_idx, optimizer_idx):
        inputs, targets = batch
        estimates = self(inputs)
        if optimizer_idx == 0:
            est_true = self.discriminator(targets, inputs)
            true_loss = self.d_loss(est_true, True)
            est_false = self.discriminator(estimates, inputs)
            fake_loss = self.d_loss(est_false, False)
            return {"loss": (true_loss + fake_loss) * 0.5}
        est_labels = self.discriminator(estimates, inputs)
        return {"loss": self.g_loss(estimates, targets, est_labels)}

    def configure_optimizers(self):
        d_opt = torch.optim.Adam(self.discriminator.parameters(), lr=self.lr)
        g_opt = torch.optim.Adam(self.generator.parameters(), lr=self.lr)
        return [d_opt, g_opt], []
