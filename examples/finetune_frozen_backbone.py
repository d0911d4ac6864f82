"""Fine-tune a classification head on top of a frozen feature extractor, with AMP on GPU.

The "pretrained" backbone is a small conv net whose weights we pretend to load; only the new
head is trained. Images are synthetic 3x32x32 tensors with a class-dependent colour cast.
"""

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

NUM_CLASSES = 6
EPOCHS = 3
BATCH_SIZE = 32
LOG_EVERY = 25


def colour_images(n, seed):
    g = torch.Generator().manual_seed(seed)
    y = torch.randint(0, NUM_CLASSES, (n,), generator=g)
    palette = torch.rand(NUM_CLASSES, 3, 1, 1, generator=torch.Generator().manual_seed(3))
    x = torch.rand(n, 3, 32, 32, generator=g) * 0.6 + palette[y]
    return TensorDataset(x, y)


def make_backbone():
    backbone = nn.Sequential(
        nn.Conv2d(3, 16, 3, stride=2, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
        nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(),
    )
    # state = torch.load("backbone.pt"); backbone.load_state_dict(state)
    for p in backbone.parameters():
        p.requires_grad = False
    return backbone


class FineTuneModel(nn.Module):
    def __init__(self, backbone, feat_dim=32):
        super().__init__()
        self.backbone = backbone
        self.head = nn.Sequential(nn.Dropout(0.1), nn.Linear(feat_dim, NUM_CLASSES))

    def forward(self, x):
        return self.head(self.backbone(x))


def main():
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    train_loader = DataLoader(colour_images(1200, 0), batch_size=BATCH_SIZE, shuffle=True,
                              num_workers=0)
    val_loader = DataLoader(colour_images(300, 1), batch_size=100)

    model = FineTuneModel(make_backbone()).to(device)
    optimizer = torch.optim.SGD(model.head.parameters(), lr=0.1, momentum=0.9)
    criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
    scaler = torch.amp.GradScaler(device, enabled=device == "cuda")

    for epoch in range(EPOCHS):
        model.train()
        model.backbone.eval()  # keep the frozen BatchNorm statistics
        for i, (images, labels) in enumerate(train_loader):
            images, labels = images.to(device), labels.to(device)
            optimizer.zero_grad()
            with torch.autocast(device_type=device, enabled=device == "cuda"):
                logits = model(images)
                loss = criterion(logits, labels)
            loss.backward()
            scaler.step(optimizer)
            scaler.update()
            if i % LOG_EVERY == 0:
                print(f"epoch {epoch} iter {i:3d} loss {loss.item():.4f}")

        model.eval()
        correct = 0
        with torch.inference_mode():
            for images, labels in val_loader:
                images, labels = images.to(device), labels.to(device)
                correct += (model(images).argmax(1) == labels).sum().item()
        print(f"epoch {epoch}: val accuracy {correct / len(val_loader.dataset):.3f}")

    print(f"final loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
