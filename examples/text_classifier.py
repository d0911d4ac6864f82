"""Bag-of-embeddings text classifier with `train_one_epoch()` / `evaluate()` helpers.

The "news articles" are synthetic token sequences: each of the four topics draws a third of its
tokens from its own slice of the vocabulary, the rest uniformly, so there is a topic to learn.
"""

import time

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset, random_split

VOCAB_SIZE = 2000
NUM_CLASSES = 4
SEQ_LEN = 32
EMBED_DIM = 64
EPOCHS = 4
LR = 5.0
BATCH_SIZE = 64
LOG_INTERVAL = 20


def build_corpus(n_docs, seed=0):
    g = torch.Generator().manual_seed(seed)
    labels = torch.randint(0, NUM_CLASSES, (n_docs,), generator=g)
    tokens = torch.randint(1, VOCAB_SIZE, (n_docs, SEQ_LEN), generator=g)
    topic_words = torch.randint(0, 100, (n_docs, SEQ_LEN // 3), generator=g)
    tokens[:, : SEQ_LEN // 3] = 1 + labels[:, None] * 100 + topic_words
    return TensorDataset(tokens, labels)


class TextClassificationModel(nn.Module):
    def __init__(self, vocab_size, embed_dim, num_class):
        super().__init__()
        self.embedding = nn.EmbeddingBag(vocab_size, embed_dim, mode="mean")
        self.dropout = nn.Dropout(0.3)
        self.fc = nn.Linear(embed_dim, num_class)
        self.embedding.weight.data.uniform_(-0.5, 0.5)
        self.fc.weight.data.uniform_(-0.5, 0.5)
        self.fc.bias.data.zero_()

    def forward(self, text):
        return self.fc(self.dropout(self.embedding(text)))


def train_one_epoch(model, dataloader, optimizer, criterion, epoch):
    total_acc, total_count = 0, 0
    start_time = time.time()
    for idx, (text, label) in enumerate(dataloader):
        optimizer.zero_grad()
        predicted_label = model(text)
        loss = criterion(predicted_label, label)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.1)
        optimizer.step()
        if idx % LOG_INTERVAL == 0 and idx > 0:
            total_acc += (predicted_label.argmax(1) == label).sum().item()
            total_count += label.size(0)
            elapsed = time.time() - start_time
            print(f"| epoch {epoch:2d} | {idx:4d}/{len(dataloader):4d} batches "
                  f"| accuracy {total_acc / total_count:.3f} | loss {loss.item():.4f} "
                  f"| {elapsed * 1000 / LOG_INTERVAL:.1f} ms/batch")
            start_time = time.time()
    return loss.item()


def evaluate(model, dataloader, criterion):
    model.eval()
    total_acc, total_loss, total_count = 0, 0.0, 0
    for text, label in dataloader:
        predicted_label = model(text)
        total_loss += criterion(predicted_label, label).item() * label.size(0)
        total_acc += (predicted_label.argmax(1) == label).sum().item()
        total_count += label.size(0)
    return total_loss / total_count, total_acc / total_count


def main():
    torch.manual_seed(0)
    dataset = build_corpus(4000)
    train_set, valid_set = random_split(dataset, [3500, 500],
                                        generator=torch.Generator().manual_seed(0))
    train_loader = DataLoader(train_set, batch_size=BATCH_SIZE, shuffle=True)
    valid_loader = DataLoader(valid_set, batch_size=BATCH_SIZE)

    model = TextClassificationModel(VOCAB_SIZE, EMBED_DIM, NUM_CLASSES)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=LR)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 1.0, gamma=0.1)

    best_acc = None
    model.train()
    for epoch in range(1, EPOCHS + 1):
        epoch_start = time.time()
        train_loss = train_one_epoch(model, train_loader, optimizer, criterion, epoch)
        val_loss, val_acc = evaluate(model, valid_loader, criterion)
        if best_acc is not None and best_acc > val_acc:
            scheduler.step()
        else:
            best_acc = val_acc
        print(f"| end of epoch {epoch} | {time.time() - epoch_start:.1f}s "
              f"| valid loss {val_loss:.4f} | valid accuracy {val_acc:.3f}")

    print(f"final loss {train_loss:.4f}")


if __name__ == "__main__":
    main()
