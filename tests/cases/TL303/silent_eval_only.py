import torch
from torch.utils.data import DataLoader


@torch.no_grad()
def evaluate(model, dataset):
    loader = DataLoader(dataset, batch_size=256)
    model.eval()
    correct = 0
    for x, y in loader:
        correct += (model(x.cuda()).argmax(1) == y.cuda()).sum().item()
    return correct / len(dataset)


def extract_features(encoder, dataset):
    loader = DataLoader(dataset, batch_size=512, shuffle=False, num_workers=0)
    feats = []
    with torch.inference_mode():
        for x, _ in loader:
            feats.append(encoder(x.cuda()).cpu())
    return torch.cat(feats)
