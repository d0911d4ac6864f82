import torch
import webdataset as wds
from datasets import load_dataset
from torch.utils.data import DataLoader


def train(model, optimizer, urls):
    dataset = wds.WebDataset(urls).shuffle(1000).decode("torchrgb").to_tuple("jpg", "cls")
    loader = DataLoader(dataset, batch_size=64, num_workers=8)
    for images, labels in loader:
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(model(images), labels).backward()
        optimizer.step()


def pretrain(model, optimizer):
    train_ds = load_dataset("allenai/c4", "en", split="train", streaming=True)
    loader = DataLoader(train_ds, batch_size=8)
    for batch in loader:
        optimizer.zero_grad()
        model(**batch).loss.backward()
        optimizer.step()


def finetune(model, optimizer, tokenize):
    corpus = load_dataset("allenai/c4", "en", split="train", streaming=True)
    loader = DataLoader(corpus.map(tokenize), batch_size=8, num_workers=2)
    for batch in loader:
        optimizer.zero_grad()
        model(**batch).loss.backward()
        optimizer.step()
