"""train_epoch() sums each batch's loss tensor (returned in a tuple by the task method) into epoch totals, keeping all graphs of the epoch."""
import torch
from torch import nn


def masked_mse(truth, pred, mask):
    return (((truth - pred) ** 2) * mask).sum() / mask.sum()


class Forecaster(nn.Module):
    def __init__(self, dim, hidden=32):
        super().__init__()
        self.rnn = nn.GRU(dim, hidden, batch_first=True)
        self.mean = nn.Linear(hidden, dim)
        self.log_var = nn.Linear(hidden, dim)

    def interpolation(self, batch):
        obs, truth, mask = batch
        h, _ = self.rnn(obs * mask)
        mean, var = self.mean(h), self.log_var(h).exp() + 1e-4
        nll = 0.5 * ((truth - mean) ** 2 / var + var.log())
        loss = (nll * mask).sum() / mask.sum()
        imput_loss = (nll * (1 - mask)).sum() / (1 - mask).sum()
        imput_mse = masked_mse(truth, mean, 1 - mask)
        return loss, mean, truth, mask, imput_loss, imput_mse

    def train_epoch(self, loader, optimizer):
        epoch_ll = 0
        epoch_mse = 0
        epoch_imput_ll = 0
        epoch_imput_mse = 0
        for i, batch in enumerate(loader):
            loss, mean, truth, mask, imput_loss, imput_mse = self.interpolation(batch)
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(self.parameters(), 1)
            optimizer.step()

            epoch_ll += loss
            epoch_mse += masked_mse(truth, mean, mask).item()
            epoch_imput_ll += imput_loss
            epoch_imput_mse += imput_mse
        n = i + 1
        return epoch_ll / n, epoch_mse / n, [epoch_imput_ll / n, epoch_imput_mse / n]


if __name__ == "__main__":
    model = Forecaster(3)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    data = []
    for _ in range(10):
        x = torch.randn(4, 20, 3)
        data.append((x, x, (torch.rand(4, 20, 3) > 0.3).float()))
    for epoch in range(3):
        print(epoch, model.train_epoch(data, opt))
