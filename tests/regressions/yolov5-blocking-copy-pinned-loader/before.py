"""Batches come from a loader built with pin_memory=True by a factory, but every copy blocks."""
import torch
from torch.utils.data import DataLoader, TensorDataset


def create_dataloader(images, labels, batch_size, workers=8):
    dataset = TensorDataset(images, labels)
    return DataLoader(dataset, batch_size=batch_size, shuffle=True, num_workers=workers, pin_memory=True)


def train(model, device, epochs=100):
    model.to(device)
    dataloader = create_dataloader(torch.randint(0, 255, (512, 3, 64, 64), dtype=torch.uint8), torch.zeros(512), 16)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for epoch in range(epochs):
        for imgs, targets in dataloader:
            imgs = imgs.to(device).float() / 255.0
            loss = (model(imgs).squeeze(1) - targets.to(device)).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    train(torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(3 * 64 * 64, 1)), torch.device("cuda"))
