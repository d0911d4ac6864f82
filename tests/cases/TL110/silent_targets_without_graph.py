# Targets computed under no_grad, combined with outputs that carry the graph: the loss has a
# graph whenever one of its inputs may, even when the tracker cannot see into that input (a
# method of another module, a leaf tensor that requires grad).
import torch
import torch.nn.functional as F


class QNetwork(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Linear(4, 2)

    def get_action(self, x):
        q = self.net(x)
        return q.argmax(1), q


q_network = QNetwork()
target_network = QNetwork()
optimizer = torch.optim.Adam(q_network.parameters())
log_alpha = torch.zeros(1, requires_grad=True)
a_optimizer = torch.optim.Adam([log_alpha])

for step in range(100):
    obs = torch.randn(8, 4)
    with torch.no_grad():
        _, next_q = target_network.get_action(obs)
        target = next_q.max(1).values * 0.99
    _, old_q = q_network.get_action(obs)
    loss = F.mse_loss(old_q.max(1).values, target)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

    with torch.no_grad():
        log_pi = torch.randn(8)
    alpha_loss = (-log_alpha.exp() * (log_pi + 1.0)).mean()
    a_optimizer.zero_grad()
    alpha_loss.backward()
    a_optimizer.step()
