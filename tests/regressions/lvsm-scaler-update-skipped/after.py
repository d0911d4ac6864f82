"""A view-synthesis trainer that skips an optimizer step when the gradient norm explodes."""

import torch


def main(model, loader, total_steps, grad_clip_norm=1.0, allowed_factor=5.0):
    optimizer = torch.optim.AdamW(model.parameters(), lr=4e-4)
    scaler = torch.amp.GradScaler("cuda")
    step = 0
    data = iter(loader)
    while step <= total_steps:
        step += 1
        batch = next(data)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(batch)
        scaler.scale(loss).backward()
        skip_optimizer_step = False
        if torch.isnan(loss) or torch.isinf(loss):
            skip_optimizer_step = True
        if not skip_optimizer_step:
            scaler.unscale_(optimizer)
            total_grad_norm = torch.nn.utils.clip_grad_norm_(
                model.parameters(), max_norm=grad_clip_norm
            ).item()
            if total_grad_norm > grad_clip_norm * allowed_factor:
                skip_optimizer_step = True
            if not skip_optimizer_step:
                scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad(set_to_none=True)
