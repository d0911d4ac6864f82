"""The Hugging Face Trainer on a small model of our own and dict batches (input_ids, labels)."""

import torch
from torch import nn
from transformers import Trainer, TrainingArguments


class Tokens(torch.utils.data.Dataset):
    def __init__(self, n, seed):
        g = torch.Generator().manual_seed(seed)
        self.x = torch.randint(0, 20, (n, 6), generator=g)
        self.y = (self.x[:, 0] % 3).long()

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return {"input_ids": self.x[i], "labels": self.y[i]}


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(20, 32)
        self.head = nn.Linear(6 * 32, 3)

    def forward(self, input_ids, labels=None):
        logits = self.head(self.embed(input_ids).flatten(1))
        loss = nn.functional.cross_entropy(logits, labels) if labels is not None else None
        return {"loss": loss, "logits": logits}


torch.manual_seed(0)
args = TrainingArguments(
    output_dir="hf-out",
    per_device_train_batch_size=16,
    per_device_eval_batch_size=16,
    num_train_epochs=1,
    learning_rate=5e-3,
    report_to=[],
    logging_strategy="no",
    save_strategy="no",
    use_cpu=True,
    disable_tqdm=True,
)
trainer = Trainer(model=Model(), args=args, train_dataset=Tokens(256, 0), eval_dataset=Tokens(64, 1))
trainer.train()
