"""A pretraining loop with a counter wrapped to the accumulation window; the clip runs after
every micro-batch's backward, the step only when the counter wraps to zero.
Fixed: the clip runs in the step's block, once per window."""
from dataclasses import dataclass

import torch


@dataclass
class TrainState:
    step: int
    acc_step: int


def train(model, data_iter, steps, grad_acc_steps, clip):
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: 1.0)
    state = TrainState(step=0, acc_step=0)
    while state.step < steps:
        state.acc_step += 1
        state.acc_step = state.acc_step % grad_acc_steps
        tokens, labels = next(data_iter)
        loss = model(tokens, labels) / grad_acc_steps
        loss.backward()
        loss = loss.detach() * grad_acc_steps
        grad_norm = 0.0
        if state.acc_step == 0:
            grad_norm = torch.nn.utils.clip_grad_norm_(
                model.parameters(), max_norm=clip, foreach=True
            ).item()
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
            state.step += 1
        print(loss.item(), grad_norm)
