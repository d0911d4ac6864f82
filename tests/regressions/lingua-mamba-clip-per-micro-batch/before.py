"""A state-space model's trainer: the loss is scaled for accumulation and backpropagated, the
gradient norm is clipped right away, and the step waits for the wrapped counter."""
import torch


class State:
    def __init__(self):
        self.step = 0
        self.acc_step = 0


def train(model, batches, args):
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    state = State()
    while state.step < args.steps:
        state.acc_step = (state.acc_step + 1) % args.grad_acc_steps
        input_ids, labels = next(batches)
        loss = model(input_ids, labels)
        (loss / args.grad_acc_steps).backward()
        grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=args.clip)
        if state.acc_step == 0:
            optimizer.step()
            optimizer.zero_grad()
            state.step += 1
            print(float(grad_norm))
