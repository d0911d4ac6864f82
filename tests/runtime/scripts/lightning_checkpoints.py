"""A Lightning Trainer that checkpoints its best model through ModelCheckpoint (written through
fsspec), logs to CSV and TensorBoard, and reloads the best checkpoint for testing: the pattern
that left 0-byte .ckpt files and an EOFError when torchlint discarded saves. Runs from a
workspace that already has checkpoints/ and lightning_logs/ of an earlier run."""

import lightning as L
import torch
from lightning.pytorch.callbacks import ModelCheckpoint
from lightning.pytorch.loggers import CSVLogger, TensorBoardLogger
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class Classifier(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))

    def forward(self, x):
        return self.net(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.cross_entropy(self(x), y)
        self.log("train_loss", loss)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", nn.functional.cross_entropy(self(x), y))

    def test_step(self, batch, batch_idx):
        x, y = batch
        self.log("test_loss", nn.functional.cross_entropy(self(x), y))

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


torch.manual_seed(0)
data = TensorDataset(torch.randn(32, 4), torch.randint(0, 2, (32,)))
loader = DataLoader(data, batch_size=8, shuffle=True)
checkpoints = ModelCheckpoint(dirpath="checkpoints", monitor="val_loss", save_top_k=1, save_last=True)
trainer = L.Trainer(
    max_epochs=2,
    callbacks=[checkpoints],
    logger=[CSVLogger("."), TensorBoardLogger("runs")],
    enable_progress_bar=False,
    enable_model_summary=False,
    num_sanity_val_steps=0,
)
model = Classifier()
trainer.fit(model, loader, DataLoader(data, batch_size=8))
assert checkpoints.best_model_path.endswith(".ckpt"), checkpoints.best_model_path
trainer.test(model, DataLoader(data, batch_size=8), ckpt_path="best")
reloaded = Classifier.load_from_checkpoint(checkpoints.best_model_path)
print("reloaded the best checkpoint:", checkpoints.best_model_path)
