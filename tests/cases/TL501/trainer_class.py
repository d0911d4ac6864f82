import torch


class WhiteningTrainer:
    def __init__(self, model, loader):
        self.model = model
        self.loader = loader

    def whiten(self, features):
        cov = features.T @ features / features.shape[0]
        values, vectors = torch.symeig(cov, eigenvectors=True)  # expect: TL501
        return features @ vectors / values.clamp_min(1e-6).sqrt()

    def rank(self, weight):
        return torch.matrix_rank(weight.detach())  # expect: TL501
