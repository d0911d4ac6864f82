"""A trainer that saves milestones and loads them back with a bare torch.load."""
from pathlib import Path

import torch
from torch import nn


class Trainer:
    def __init__(self, model, results_folder="./results"):
        self.model = model
        self.opt = torch.optim.Adam(model.parameters(), lr=8e-5)
        self.step = 0
        self.results_folder = Path(results_folder)

    def save(self, milestone):
        data = {"step": self.step, "model": self.model.state_dict(), "opt": self.opt.state_dict()}
        torch.save(data, str(self.results_folder / f"model-{milestone}.pt"))

    def load(self, milestone, device="cpu"):
        data = torch.load(str(self.results_folder / f"model-{milestone}.pt"), map_location=device)
        self.model.load_state_dict(data["model"])
        self.step = data["step"]
        self.opt.load_state_dict(data["opt"])


if __name__ == "__main__":
    Trainer(nn.Linear(4, 4)).load(1)
