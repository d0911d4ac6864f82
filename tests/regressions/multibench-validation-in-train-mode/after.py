"""A supervised trainer for multimodal inputs, with a validation pass after every epoch."""

import torch


def train(model, train_dataloader, valid_dataloader, total_epochs, objective, lr=1e-3):
    op = torch.optim.AdamW(model.parameters(), lr=lr)
    for epoch in range(total_epochs):
        model.train()
        for j in train_dataloader:
            op.zero_grad()
            out = model([i.float() for i in j[:-1]])
            loss = objective(out, j[-1])
            loss.backward()
            op.step()
        model.eval()
        with torch.no_grad():
            totalloss = 0.0
            for j in valid_dataloader:
                out = model([i.float() for i in j[:-1]])
                totalloss += objective(out, j[-1]) * len(j[-1])
        print(epoch, totalloss)
