"""Mixed-precision training with the `torch.amp` API: the clean AMP reference script.

float16 + GradScaler on a GPU, bfloat16 autocast (no scaler needed) on the CPU. The scaler is
used the documented way: scale the loss, unscale before clipping, step through the scaler,
update the scale; the loss is read back only every `LOG_EVERY` steps.
"""

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

EPOCHS = 3
BATCH_SIZE = 128
LOG_EVERY = 10
IN_DIM, HIDDEN, N_CLASSES = 64, 128, 8


def make_dataset(n, seed):
    g = torch.Generator().manual_seed(seed)
    proj = torch.randn(IN_DIM, N_CLASSES, generator=torch.Generator().manual_seed(7))
    x = torch.randn(n, IN_DIM, generator=g)
    y = (x @ proj + 0.5 * torch.randn(n, N_CLASSES, generator=g)).argmax(1)
    return TensorDataset(x, y)


def build_model():
    return nn.Sequential(
        nn.Linear(IN_DIM, HIDDEN), nn.GELU(),
        nn.Linear(HIDDEN, HIDDEN), nn.GELU(),
        nn.Linear(HIDDEN, N_CLASSES),
    )


def main():
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    use_cuda = device == "cuda"
    amp_dtype = torch.float16 if use_cuda else torch.bfloat16

    train_loader = DataLoader(make_dataset(4096, 0), batch_size=BATCH_SIZE, shuffle=True,
                              pin_memory=use_cuda)
    val_loader = DataLoader(make_dataset(1024, 1), batch_size=512)

    model = build_model().to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-3)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, EPOCHS * len(train_loader))
    criterion = nn.CrossEntropyLoss()
    scaler = torch.amp.GradScaler(device, enabled=use_cuda)

    for epoch in range(EPOCHS):
        model.train()
        for step, (x, y) in enumerate(train_loader):
            x = x.to(device, non_blocking=True)
            y = y.to(device, non_blocking=True)
            optimizer.zero_grad(set_to_none=True)
            with torch.autocast(device_type=device, dtype=amp_dtype):
                loss = criterion(model(x), y)
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
            scaler.step(optimizer)
            scaler.update()
            scheduler.step()
            if step % LOG_EVERY == 0:
                print(f"epoch {epoch} step {step:3d} loss {loss.item():.4f} "
                      f"scale {scaler.get_scale() if use_cuda else 1.0:.0f}")

        model.eval()
        correct = torch.zeros((), dtype=torch.long, device=device)
        with torch.no_grad(), torch.autocast(device_type=device, dtype=amp_dtype):
            for x, y in val_loader:
                x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
                correct += (model(x).argmax(1) == y).sum()
        print(f"epoch {epoch}: val accuracy {correct.item() / len(val_loader.dataset):.3f}")

    print(f"final loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
