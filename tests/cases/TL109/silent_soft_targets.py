import torch
import torch.nn.functional as F


def distill(student, teacher, loader, optimizer, temperature=4.0, alpha=0.7):
    teacher.eval()
    for x, y in loader:
        with torch.no_grad():
            soft_targets = F.softmax(teacher(x) / temperature, dim=1)
        logits = student(x)
        soft = F.cross_entropy(logits / temperature, soft_targets)
        hard = F.cross_entropy(logits, y)
        kl = F.kl_div(F.log_softmax(logits / temperature, dim=1), soft_targets, reduction="batchmean")
        loss = alpha * soft + (1 - alpha) * hard + kl
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
