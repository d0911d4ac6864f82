# Near-misses of a drained queue: the list is read but never emptied, so every step's graph
# stays alive.
import torch


def train(model, loader, optimizer):
    history = []
    for batch in loader:
        loss = model(batch).sum()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        history.append(loss)  # expect: TL108
        last = history[-1]
        print(last.shape)
