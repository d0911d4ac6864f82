"""A DreamBooth fine-tuning loop: prior-preservation loss, backward through the accelerator,
and the clip of the UNet's gradients on every micro-batch of the accumulation window.
Fixed: clipped only when the gradients are synchronised."""
import torch
import torch.nn.functional as F
from accelerate import Accelerator


def main(args, unet, text_encoder, vae, noise_scheduler, loader):
    accelerator = Accelerator(gradient_accumulation_steps=args.gradient_accumulation_steps)
    optimizer = torch.optim.AdamW(unet.parameters(), lr=args.learning_rate)
    unet, optimizer, loader = accelerator.prepare(unet, optimizer, loader)
    for epoch in range(args.num_train_epochs):
        unet.train()
        for batch in loader:
            with accelerator.accumulate(unet):
                with torch.no_grad():
                    latents = vae.encode(batch["pixel_values"]).latent_dist.sample() * 0.18215
                    hidden = text_encoder(batch["input_ids"])[0]
                noise = torch.randn_like(latents)
                timesteps = torch.randint(0, 1000, (latents.shape[0],), device=latents.device)
                noisy = noise_scheduler.add_noise(latents, noise, timesteps)
                noise_pred = unet(noisy, timesteps, hidden).sample
                loss = F.mse_loss(noise_pred, noise, reduction="none").mean([1, 2, 3]).mean()
                accelerator.backward(loss)
                if accelerator.sync_gradients:
                    accelerator.clip_grad_norm_(unet.parameters(), args.max_grad_norm)
                optimizer.step()
                optimizer.zero_grad()
