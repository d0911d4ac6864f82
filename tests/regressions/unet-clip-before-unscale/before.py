"""A segmentation loop under AMP that clips the gradients while they are still scaled."""
import torch
from torch import nn

device = torch.device("cuda")
model = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.Conv2d(32, 2, 1)).to(device)
optimizer = torch.optim.RMSprop(model.parameters(), lr=1e-5, momentum=0.999)
grad_scaler = torch.amp.GradScaler("cuda")
criterion = nn.CrossEntropyLoss()
loader = [(torch.rand(2, 3, 96, 96), torch.randint(0, 2, (2, 96, 96))) for _ in range(20)]

for epoch in range(5):
    model.train()
    for images, masks in loader:
        images, masks = images.to(device), masks.to(device)
        with torch.autocast("cuda"):
            loss = criterion(model(images), masks)
        optimizer.zero_grad(set_to_none=True)
        grad_scaler.scale(loss).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        grad_scaler.step(optimizer)
        grad_scaler.update()
