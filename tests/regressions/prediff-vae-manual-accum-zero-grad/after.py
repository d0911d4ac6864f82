"""Manual-optimization LightningModule with accumulation: both optimizers are zeroed before every micro-batch backward."""
import lightning.pytorch as pl
import torch
import torch.nn.functional as F
from torch import nn


class AutoencoderGAN(pl.LightningModule):
    def __init__(self, dim=16, accumulate_grad_batches=4, clip_val=1.0):
        super().__init__()
        self.automatic_optimization = False
        self.accumulate_grad_batches = accumulate_grad_batches
        self.clip_val = clip_val
        self.encoder = nn.Linear(dim, 4)
        self.decoder = nn.Linear(4, dim)
        self.disc = nn.Sequential(nn.Linear(dim, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))

    def forward(self, x):
        return self.decoder(self.encoder(x))

    def training_step(self, batch, batch_idx):
        g_opt, d_opt = self.optimizers()
        g_sch, d_sch = self.lr_schedulers()
        recon = self(batch)

        aeloss = F.mse_loss(recon, batch) - 0.01 * self.disc(recon).mean()
        aeloss /= self.accumulate_grad_batches
        self.log("aeloss", aeloss, prog_bar=True)
        self.manual_backward(aeloss)
        if (batch_idx + 1) % self.accumulate_grad_batches == 0:
            self.clip_gradients(g_opt, gradient_clip_val=self.clip_val, gradient_clip_algorithm="norm")
            g_opt.step()
            g_sch.step()
            g_opt.zero_grad()

        discloss = F.softplus(self.disc(recon.detach())).mean() + F.softplus(-self.disc(batch)).mean()
        discloss /= self.accumulate_grad_batches
        self.log("discloss", discloss, prog_bar=True)
        self.manual_backward(discloss)
        if (batch_idx + 1) % self.accumulate_grad_batches == 0:
            self.clip_gradients(d_opt, gradient_clip_val=self.clip_val, gradient_clip_algorithm="norm")
            d_opt.step()
            d_sch.step()
            d_opt.zero_grad()

    def configure_optimizers(self):
        g_opt = torch.optim.Adam(list(self.encoder.parameters()) + list(self.decoder.parameters()), lr=1e-3)
        d_opt = torch.optim.Adam(self.disc.parameters(), lr=1e-3)
        g_sch = torch.optim.lr_scheduler.StepLR(g_opt, step_size=10)
        d_sch = torch.optim.lr_scheduler.StepLR(d_opt, step_size=10)
        return [g_opt, d_opt], [g_sch, d_sch]


if __name__ == "__main__":
    data = torch.utils.data.DataLoader(torch.randn(256, 16), batch_size=8)
    trainer = pl.Trainer(max_epochs=2, accelerator="cpu", logger=False, enable_checkpointing=False)
    trainer.fit(AutoencoderGAN(), data)
