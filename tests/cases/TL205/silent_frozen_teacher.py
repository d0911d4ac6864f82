import torch
import torch.nn.functional as F


def distill(student, teacher, loader, optimizer):
    for x in loader:
        with torch.no_grad(), torch.autocast("cuda", dtype=torch.float16):
            teacher_logits = teacher(x)
        loss = F.kl_div(F.log_softmax(student(x), 1), F.softmax(teacher_logits.float(), 1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
