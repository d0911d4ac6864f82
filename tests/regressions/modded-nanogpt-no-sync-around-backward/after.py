"""A speed-run trainer accumulating over micro-steps: `no_sync()` wraps only the backward of
each micro-step but the last.
Fixed: the forward runs inside the `no_sync()` block too."""


def train_step(model, optimizers, loader, x, y, accumulation_steps):
    for i in range(1, accumulation_steps + 1):
        if i < accumulation_steps:
            with model.no_sync():
                loss = model(x, y)
                loss.backward()
        else:
            loss = model(x, y)
            loss.backward()
        train_loss = loss.detach()
        x, y = loader.next_batch()
    for opt in optimizers:
        opt.step()
    model.zero_grad(set_to_none=True)
    return train_loss
