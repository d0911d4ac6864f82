"""GPT-2 pretraining with gradient accumulation under DDP: the sync flag of each micro-step is
set between the forward and the backward.
Fixed: the flag is set before the forward, which reads it."""

import torch


def train(model, optimizer, loader, ddp, max_steps, grad_accum_steps):
    for step in range(max_steps):
        optimizer.zero_grad()
        loss_accum = 0.0
        for micro_step in range(grad_accum_steps):
            x, y = loader.next_batch()
            if ddp:
                model.require_backward_grad_sync = micro_step == grad_accum_steps - 1
            with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
                logits, loss = model(x, y)
            loss = loss / grad_accum_steps
            loss_accum += loss.detach()
            loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
