# Near-misses of sibling loops: the unscale loop runs before a second backward, or only in a
# branch the clip does not share.
import torch


def train(models, optimizers, loader, scaler, warm):
    for batch in loader:
        for model, opt in zip(models, optimizers):
            scaler.scale(model(batch).sum()).backward()
            scaler.unscale_(opt)
        for model in models:
            scaler.scale(model(batch).mean()).backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)  # expect: TL203
        for opt in optimizers:
            scaler.step(opt)
        scaler.update()


def train_warm(models, optimizers, loader, scaler, warm):
    for batch in loader:
        scaler.scale(sum(m(batch).sum() for m in models)).backward()
        if warm:
            for opt in optimizers:
                scaler.unscale_(opt)
        else:
            for model in models:
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)  # expect: TL203
        for opt in optimizers:
            scaler.step(opt)
        scaler.update()
