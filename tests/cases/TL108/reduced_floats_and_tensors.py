# A training step that returns Python numbers (its losses read with `.item()`), reduced across
# ranks by the strategy object and kept in a list: floats, no graph. The same reduction of a
# loss tensor is still a graph kept alive.
import torch


class CriticTrainer:
    def __init__(self, critic, optimizer, strategy):
        self.critic = critic
        self.optimizer = optimizer
        self.strategy = strategy

    def fit(self, loader):
        status_list = []
        for batch in loader:
            status = self.training_step(batch)
            status = self.strategy.all_reduce(status)
            status_list.append(status)
        return status_list

    def fit_tensors(self, loader):
        losses = []
        for batch in loader:
            loss = self.critic(batch).pow(2).mean()
            self.strategy.backward(loss, self.critic, self.optimizer)
            self.strategy.optimizer_step(self.optimizer, self.critic)
            losses.append(self.strategy.all_reduce(loss))  # expect: TL108
        return losses

    def training_step(self, batch):
        values = self.critic(batch)
        loss = values.pow(2).mean()
        self.strategy.backward(loss, self.critic, self.optimizer)
        self.strategy.optimizer_step(self.optimizer, self.critic)
        return {"critic_loss": loss.detach().item()}


def evaluate(critic, loader):
    with torch.no_grad():
        return [critic(batch).mean() for batch in loader]
