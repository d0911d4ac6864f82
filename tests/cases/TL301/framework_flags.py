"""Branches under a framework's periodic flags run every N steps, not every step."""

import torch


class Trainer:
    def train(self, model, loader, optimizer, accelerator):
        for x, y in loader:
            loss = torch.nn.functional.mse_loss(model(x), y)
            accelerator.backward(loss)
            if accelerator.sync_gradients:
                print(loss.item())
            optimizer.step()
            optimizer.zero_grad()
            if self.control.should_log:
                print(loss.item())
            if self.args.verbose:
                print(loss.item())  # expect: TL301
