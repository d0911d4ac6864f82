"""Training a small transformer language model with gradient accumulation: every batch's loss
is backpropagated as it is, and the optimizer steps every `n_gradient_accumulation_steps`.
Fixed: the loss is divided by the accumulation steps before the backward."""
import torch


def train(model, train_loader, device, n_gradient_accumulation_steps, warmup_samples, lr):
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min(1.0, s / 100))
    grad_updates = 0
    for step, batch in enumerate(train_loader):
        tokens = batch["tokens"].to(device=device)
        loss = model(tokens, return_type="loss")
        loss = loss / n_gradient_accumulation_steps
        loss.backward()
        if (step + 1) % n_gradient_accumulation_steps == 0:
            optimizer.step()
            optimizer.zero_grad()
            grad_updates += 1
            if warmup_samples > 0:
                scheduler.step()
