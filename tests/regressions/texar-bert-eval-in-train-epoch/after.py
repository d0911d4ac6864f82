"""Closures inside main(): the training epoch evaluates every eval_steps steps and stays in eval mode."""
import torch
import torch.nn.functional as F
from torch import nn


class Classifier(nn.Module):
    def __init__(self, vocab=100, dim=32, num_classes=2):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.dropout = nn.Dropout(0.1)
        self.head = nn.Linear(dim, num_classes)

    def forward(self, ids):
        return self.head(self.dropout(self.embed(ids).mean(dim=1)))


def main(max_train_epoch=3, eval_steps=20):
    model = Classifier()
    optim = torch.optim.Adam(model.parameters(), lr=1e-3)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optim, lambda s: min(1.0, (s + 1) / 10))
    train_data = [(torch.randint(0, 100, (8, 12)), torch.randint(0, 2, (8,))) for _ in range(50)]
    eval_data = [(torch.randint(0, 100, (8, 12)), torch.randint(0, 2, (8,))) for _ in range(5)]

    def _train_epoch():
        model.train()
        for ids, labels in train_data:
            optim.zero_grad()
            loss = F.cross_entropy(model(ids), labels)
            loss.backward()
            optim.step()
            scheduler.step()
            step = scheduler.last_epoch
            if eval_steps > 0 and step % eval_steps == 0:
                _eval_epoch()
                model.train()

    @torch.no_grad()
    def _eval_epoch():
        model.eval()
        correct = total = 0
        for ids, labels in eval_data:
            correct += (model(ids).argmax(1) == labels).sum().item()
            total += labels.numel()
        print("eval accu", correct / total)

    for _ in range(max_train_epoch):
        _train_epoch()
    torch.save({"model": model.state_dict()}, "/tmp/texar_bert_demo.ckpt")


if __name__ == "__main__":
    main()
