import torch
from torch import nn


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(32, 32)
        self.head = nn.Linear(32, 8)

    def forward(self, obs, target):
        logits = self.head(torch.relu(self.body(obs)))
        loss = nn.functional.cross_entropy(logits, target)
        return loss, {"loss": loss.item()}  # expect: TL306


class Trainer:
    def __init__(self, policy):
        self.policy = torch.compile(policy)
        self.optimizer = torch.optim.Adam(policy.parameters())
        self.update = torch.compile(self._update)

    def _update(self, grads):
        norms = [g.norm() for g in grads]
        return torch.stack(norms).tolist()  # expect: TL306


model = Policy()
model = torch.compile(model)


class Critic(nn.Module):
    def __init__(self):
        super().__init__()
        self.value = nn.Linear(32, 1)

    def forward(self, obs):
        value = self.value(obs)
        if float(value.mean()) > 1e3:  # expect: TL306
            raise RuntimeError("value diverged")
        return value


critic = Critic()
critic.compile()
