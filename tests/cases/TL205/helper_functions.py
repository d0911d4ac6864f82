import torch
import torch.nn.functional as F


def forward_loss(model, batch):
    inputs, targets = batch
    with torch.autocast("cuda", dtype=torch.float16):
        logits = model(inputs)
        return F.cross_entropy(logits, targets)


def train_one_epoch(model, loader, optimizer):
    model.train()
    for batch in loader:
        loss = forward_loss(model, batch)
        optimizer.zero_grad()
        loss.backward()  # expect: TL205
        optimizer.step()


@torch.autocast("cuda")
def contrastive_loss(encoder, views):
    z1, z2 = encoder(views[0]), encoder(views[1])
    return F.cosine_embedding_loss(z1, z2, torch.ones(z1.size(0), device=z1.device))


def pretrain(encoder, loader, optimizer, epochs):
    for epoch in range(epochs):
        for views in loader:
            loss = contrastive_loss(encoder, views)
            optimizer.zero_grad()
            loss.backward()  # expect: TL205
            optimizer.step()
