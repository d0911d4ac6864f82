import torch
from torch import nn


class Trainer:
    def __init__(self, model: nn.Module, loader, num_classes: int, device="cuda"):
        self.model = model.to(device)
        self.loader = loader
        self.num_classes = num_classes
        self.device = device
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

    def class_weights(self, labels):
        counts = torch.bincount(labels.cpu(), minlength=self.num_classes).float()
        return (1.0 / (counts + 1)).to(self.device)

    def training_step(self, images, labels):
        images, labels = images.to(self.device), labels.to(self.device)
        mixup = torch.rand(images.size(0), 1, 1, 1).to(self.device)  # expect: TL305
        mixed = mixup * images + (1 - mixup) * images.flip(0)
        eye = torch.eye(self.num_classes).to(self.device)  # expect: TL305
        loss = nn.functional.cross_entropy(self.model(mixed), eye[labels], weight=self.class_weights(labels))
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()

    def fit(self, epochs):
        for epoch in range(epochs):
            for images, labels in self.loader:
                self.training_step(images, labels)
