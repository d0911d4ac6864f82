"""A GPT pretraining loop: an inner loop over micro-steps runs forward and scaled backward, the
optimizer steps after it; each micro-step's loss goes into backward undivided."""
import torch


def train(model, optimizer, get_batch, ctx, max_iters, gradient_accumulation_steps, grad_clip):
    scaler = torch.cuda.amp.GradScaler(enabled=True)
    X, Y = get_batch("train")
    for iter_num in range(max_iters):
        for micro_step in range(gradient_accumulation_steps):
            with ctx:
                logits, loss = model(X, Y)
            X, Y = get_batch("train")
            scaler.scale(loss).backward()
        if grad_clip != 0.0:
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad(set_to_none=True)
        lossf = loss.item()
        print(iter_num, lossf)
