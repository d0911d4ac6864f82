import torch
import torch.nn.functional as F


def dqn_update(q_net, target_net, batch, optimizer, gamma=0.99):
    states, actions, rewards, next_states, dones = batch
    with torch.no_grad():
        next_q = target_net(next_states).max(dim=1).values
        target = rewards + gamma * next_q * (1 - dones)
    q = q_net(states).gather(1, actions.unsqueeze(1)).squeeze(1)
    loss = F.smooth_l1_loss(q, target)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()


def distill(student, teacher, loader, optimizer):
    for x, y in loader:
        with torch.no_grad():
            teacher_logits = teacher(x)
        loss = F.mse_loss(student(x), teacher_logits)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        with torch.no_grad():
            for p in student.parameters():
                p.clamp_(-1, 1)
