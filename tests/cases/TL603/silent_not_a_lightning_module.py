import lightning as L
import torch


class Segmenter(L.LightningModule):
    def __init__(self, backbone):
        super().__init__()
        self.backbone = backbone

    def training_step(self, batch, batch_idx):
        images, masks = batch
        logits = self.backbone(images)
        return {"loss": torch.nn.functional.binary_cross_entropy_with_logits(logits, masks)}

    def configure_optimizers(self):
        optimizer = torch.optim.AdamW(self.parameters(), lr=3e-4)
        scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, 3e-4, total_steps=1000)
        return {
            "optimizer": optimizer,
            "lr_scheduler": {"scheduler": scheduler, "interval": "step"},
        }


class Distiller(torch.nn.Module):
    # A plain module that names its method like Lightning's: it owns its loop.
    def training_step(self, batch, optimizer):
        optimizer.zero_grad()
        loss = self(batch).mean()
        loss.backward()
        optimizer.step()
        return loss.detach()
