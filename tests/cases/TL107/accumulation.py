import torch


def train(model, loader, optimizer, scheduler, accum_steps=4):
    for step, (x, y) in enumerate(loader):
        loss = torch.nn.functional.mse_loss(model(x), y) / accum_steps
        loss.backward()
        if (step + 1) % accum_steps == 0:
            optimizer.step()
            optimizer.zero_grad()
        scheduler.step()  # expect: TL107


def train_right(model, loader, optimizer, scheduler, accum_steps=4):
    for epoch in range(3):
        for step, (x, y) in enumerate(loader):
            loss = torch.nn.functional.mse_loss(model(x), y) / accum_steps
            loss.backward()
            if (step + 1) % accum_steps == 0:
                optimizer.step()
                scheduler.step()
                optimizer.zero_grad()
        scheduler.step()
