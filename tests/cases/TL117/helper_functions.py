# An inner loop over the micro-steps of one optimizer step, under a GradScaler.
import torch


def get_batch(data, block_size=8):
    ix = torch.randint(len(data) - block_size, (4,))
    x = torch.stack([data[i : i + block_size] for i in ix])
    return x, x


def train(model, data, max_iters, gradient_accumulation_steps):
    optimizer = torch.optim.AdamW(model.parameters(), lr=6e-4)
    scaler = torch.amp.GradScaler("cuda")
    for it in range(max_iters):
        for micro_step in range(gradient_accumulation_steps):
            X, Y = get_batch(data)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logits, loss = model(X, Y)
            scaler.scale(loss).backward()  # expect: TL117
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad(set_to_none=True)
