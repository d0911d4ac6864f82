import torch
import torch.nn.functional as F
from pytorch_lightning import LightningModule
from torch import nn


class SSLEvaluator(nn.Module):
    def __init__(self, n_input, n_classes, n_hidden=512, p=0.1):
        super().__init__()
        if n_hidden is None:
            self.block_forward = nn.Sequential(
                nn.Flatten(), nn.Dropout(p=p), nn.Linear(n_input, n_classes, bias=True), nn.Softmax()
            )
        else:
            self.block_forward = nn.Sequential(
                nn.Flatten(),
                nn.Dropout(p=p),
                nn.Linear(n_input, n_hidden, bias=False),
                nn.BatchNorm1d(n_hidden),
                nn.ReLU(inplace=True),
                nn.Dropout(p=p),
                nn.Linear(n_hidden, n_classes, bias=True),
                nn.Softmax(),
            )

    def forward(self, x):
        return self.block_forward(x)


class SSLFineTuner(LightningModule):
    def __init__(self, backbone, in_features=2048, num_classes=10, hidden_dim=None):
        super().__init__()
        self.backbone = backbone
        self.linear_layer = SSLEvaluator(in_features, num_classes, hidden_dim)

    def shared_step(self, batch):
        x, y = batch
        with torch.no_grad():
            feats = self.backbone(x)
        logits = self.linear_layer(feats.view(feats.size(0), -1))
        return F.cross_entropy(logits, y)

    def training_step(self, batch, batch_idx):
        loss = self.shared_step(batch)
        self.log("train_loss", loss)
        return loss

    def configure_optimizers(self):
        return torch.optim.Adam(self.linear_layer.parameters(), lr=1e-3)
