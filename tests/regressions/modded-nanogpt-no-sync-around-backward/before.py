"""A speed-run trainer accumulating over micro-steps: `no_sync()` wraps only the backward of
each micro-step but the last."""


def train_step(model, optimizers, loader, x, y, accumulation_steps):
    for i in range(1, accumulation_steps + 1):
        loss = model(x, y)
        train_loss = loss.detach()
        x, y = loader.next_batch()
        if i < accumulation_steps:
            with model.no_sync():
                loss.backward()
        else:
            loss.backward()
    for opt in optimizers:
        opt.step()
    model.zero_grad(set_to_none=True)
    return train_loss
