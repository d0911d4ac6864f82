import torch


class NLLTrainer:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer

    def loss(self, x, y):
        scores = self.model(x)
        log_z = scores.exp().sum(dim=1).log()  # expect: TL507
        return (log_z - scores.gather(1, y[:, None]).squeeze(1)).mean()

    def kl(self, log_ratio):
        return (torch.exp(log_ratio) - 1 - log_ratio).mean()  # expect: TL507
