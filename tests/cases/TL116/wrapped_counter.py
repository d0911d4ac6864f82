# A counter kept in range with `acc = (acc + 1) % n`; the step runs when it wraps to zero.
from dataclasses import dataclass

import torch
from torch import nn


@dataclass
class TrainState:
    step: int
    acc_step: int


def train(model, loader, grad_acc_steps, clip):
    optimizer = torch.optim.AdamW(model.parameters())
    state = TrainState(step=0, acc_step=0)
    for x, y in loader:
        state.acc_step += 1
        state.acc_step = state.acc_step % grad_acc_steps
        loss = nn.functional.mse_loss(model(x), y) / grad_acc_steps
        loss.backward()
        grad_norm = torch.nn.utils.clip_grad_norm_(  # expect: TL116
            model.parameters(), max_norm=clip, foreach=True
        ).item()
        if state.acc_step == 0:
            optimizer.step()
            optimizer.zero_grad()
            state.step += 1
            print(grad_norm)
