import torch


class Trainer:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer

    def resume(self, path):
        state = torch.load(path, map_location=lambda storage, loc: storage)  # expect: TL503
        self.model.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])

    def load_weights(self, path):
        self.model.load_state_dict(torch.load(path, weights_only=True))
