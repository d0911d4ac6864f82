# `zip` pairs one item of each iterable: here modules (converted in place) and their devices.
import torch


def restore_devices(unets, data_loader):
    devices = [next(unet.parameters()).device for unet in unets]
    for unet, device in zip(unets, devices):
        unet.to(device)
    for step, (batch, unet) in enumerate(zip(data_loader, unets)):
        unet.cuda()
    return torch.zeros(1)
