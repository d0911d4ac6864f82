import torch


class TrainPipeline:
    """One object for training and evaluation: `progress` runs the backward only when the
    model is training, in a helper of its own."""

    def __init__(self, model, optimizer):
        self._model = model
        self._optimizer = optimizer

    def _backward(self, losses):
        torch.sum(losses, dim=0).backward()

    def progress(self, it):
        batch = next(it)
        losses, output = self._model(batch)
        if self._model.training:
            self._optimizer.zero_grad()
            self._backward(losses)
            self._optimizer.step()
        return losses, output


def evaluate(pipeline, it):
    pipeline._model.eval()
    with torch.no_grad():
        while True:
            try:
                losses, _ = pipeline.progress(it)
            except StopIteration:
                break


def evaluate_unguarded(model, it):
    model.eval()
    with torch.no_grad():
        for batch in it:
            losses, _ = model(batch)
            torch.sum(losses, dim=0).backward()  # expect: TL110
