"""Fine-tuning an image classifier under autocast with a GradScaler and gradient accumulation:
the step runs every `num_grad_accumulation` batches, the loss is backpropagated undivided."""
import torch


def finetune(args, ddp_model, ddp_loader, loss_fn, params, scheduler):
    optimizer = torch.optim.AdamW(params, lr=args.lr, weight_decay=args.wd)
    scaler = torch.cuda.amp.GradScaler()
    num_batches = len(ddp_loader)
    for epoch in range(args.epochs):
        ddp_model.train()
        for i, batch in enumerate(ddp_loader):
            step = i // args.num_grad_accumulation + epoch * num_batches // args.num_grad_accumulation
            inputs = batch["images"].cuda()
            labels = batch["labels"].cuda()
            with torch.autocast(device_type="cuda", dtype=torch.float16):
                logits = ddp_model(inputs)
                loss = loss_fn(logits, labels)
            scaler.scale(loss).backward()
            if (i + 1) % args.num_grad_accumulation == 0:
                scheduler(step)
                scaler.unscale_(optimizer)
                torch.nn.utils.clip_grad_norm_(params, 1.0)
                scaler.step(optimizer)
                scaler.update()
                optimizer.zero_grad()
