"""Training sparse autoencoders on a frozen model's activations: the step flag is computed per
batch from the accumulation count, and the summed SAE loss is backpropagated undivided.
Fixed: divided by the accumulation steps."""
import torch


def train(model, saes, loader, n_gradient_accumulation_steps, lr):
    optimizer = torch.optim.Adam(saes.parameters(), lr=lr)
    for batch_idx, batch in enumerate(loader):
        is_grad_step = (batch_idx + 1) % n_gradient_accumulation_steps == 0
        with torch.no_grad():
            acts = model(batch["tokens"])
        outputs = saes(acts)
        loss = sum(out.loss for out in outputs.values())
        loss = loss / n_gradient_accumulation_steps
        loss.backward()
        if is_grad_step:
            optimizer.step()
            optimizer.zero_grad()
