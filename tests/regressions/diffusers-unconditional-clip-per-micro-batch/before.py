"""An unconditional diffusion trainer under Accelerate's accumulation window: the clip runs on
every micro-batch, not only when the window closes and the optimizer really steps."""
import torch
import torch.nn.functional as F
from accelerate import Accelerator


def main(args, model, noise_scheduler, train_dataloader):
    accelerator = Accelerator(gradient_accumulation_steps=args.gradient_accumulation_steps)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate)
    model, optimizer, train_dataloader = accelerator.prepare(model, optimizer, train_dataloader)
    for epoch in range(args.num_epochs):
        model.train()
        for step, batch in enumerate(train_dataloader):
            clean = batch["input"]
            noise = torch.randn_like(clean)
            timesteps = torch.randint(0, 1000, (clean.shape[0],), device=clean.device)
            noisy = noise_scheduler.add_noise(clean, noise, timesteps)
            with accelerator.accumulate(model):
                noise_pred = model(noisy, timesteps).sample
                loss = F.mse_loss(noise_pred, noise)
                accelerator.backward(loss)
                accelerator.clip_grad_norm_(model.parameters(), 1.0)
                optimizer.step()
                optimizer.zero_grad()
