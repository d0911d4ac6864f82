# Accelerate accumulates over a window; the clip runs on every micro-batch inside it.
import torch
import torch.nn.functional as F
from accelerate import Accelerator


def main(model, loader, args):
    accelerator = Accelerator(gradient_accumulation_steps=args.gradient_accumulation_steps)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate)
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    for epoch in range(args.num_epochs):
        for batch in loader:
            with accelerator.accumulate(model):
                loss = F.mse_loss(model(batch["input"]), batch["target"])
                accelerator.backward(loss)
                accelerator.clip_grad_norm_(model.parameters(), 1.0)  # expect: TL116
                optimizer.step()
                optimizer.zero_grad()
