import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader


def train(model, dataset, optimizer, device):
    loader = DataLoader(dataset, batch_size=64, shuffle=True, num_workers=4, pin_memory=True)
    for x, y in loader:
        x = x.to(device, non_blocking=True)
        y = y.cuda(non_blocking=True)
        mask = x.to(torch.float16)
        optimizer.zero_grad()
        F.mse_loss(model(mask), y).backward()
        optimizer.step()
