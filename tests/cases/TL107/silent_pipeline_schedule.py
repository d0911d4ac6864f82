# A pipeline-parallel schedule's `.step(...)` runs the forward and backward of the micro-batches;
# it is no learning-rate scheduler, so running it before `optimizer.step()` is the right order.
import torch


def train(model, loader, optimizer, pp_schedule, first_stage):
    for inputs, labels in loader:
        optimizer.zero_grad()
        losses = []
        pp_schedule.step(
            arg_mbs=inputs if first_stage else None, target_mbs=labels, losses=losses
        )
        loss = torch.stack(losses).mean() if losses else None
        optimizer.step()
