import torch
from accelerate import Accelerator


class Trainer:
    def __init__(self, model, optimizer, train_loader, test_loader):
        self.accelerator = Accelerator()
        self.model, self.optimizer, self.train_loader, self.test_loader = (
            self.accelerator.prepare(model, optimizer, train_loader, test_loader)
        )

    def evaluate(self):
        self.model.eval()
        all_preds, all_labels = [], []
        for inputs, labels in self.test_loader:
            with torch.no_grad():
                preds = self.model(inputs).argmax(-1)
            all_preds.append(self.accelerator.gather(preds))  # expect: TL605
            all_labels.append(self.accelerator.gather(labels))  # expect: TL605
        return (torch.cat(all_preds) == torch.cat(all_labels)).float().mean()
