import torch


@torch.no_grad()
def evaluate(model, loader):
    model.eval()
    correct = 0
    for x, y in loader:
        correct += (model(x).argmax(1) == y).sum().item()
    return correct / len(loader.dataset)


@torch.inference_mode()
def embed(encoder, loader):
    encoder.eval()
    return torch.cat([encoder(x) for x, _ in loader])


class Evaluator:
    def __init__(self, model, loader):
        self.model = model
        self.loader = loader

    @torch.no_grad()
    def run(self):
        self.model.eval()
        scores = []
        for batch in self.loader:
            scores.append(self.model(batch).sigmoid())
        return torch.cat(scores)
