"""A point-cloud completion trainer: the step runs, no line ever clears or computes gradients."""

import torch
from tqdm import tqdm


def train_net(model, chamfer, train_loader, epochs):
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=40)
    for epoch in range(epochs):
        with tqdm(train_loader) as t:
            for view, gt, partial in t:
                recon, style_loss = model(partial, view)
                cd = chamfer(recon, gt)
                loss_total = cd + style_loss * 1e-2
                optimizer.step()
                t.set_postfix(loss=f"{loss_total.item():.4f}")
        scheduler.step()
