import torch


def train(net, loader, opt, device):
    net.train()
    for i, x in enumerate(loader):
        opt.zero_grad()
        net(x).sum().backward()
        opt.step()
        if i % 100 == 0:
            net.eval().cpu()
            torch.save(net.state_dict(), "ckpt.pth")
            net.to(device).train()
