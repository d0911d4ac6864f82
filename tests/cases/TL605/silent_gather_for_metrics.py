import torch
from accelerate import Accelerator


def evaluate(model, eval_dataloader, eval_dataset, accelerator):
    model.eval()
    losses = []
    for batch in eval_dataloader:
        with torch.no_grad():
            loss = model(**batch).loss
        losses.append(accelerator.gather_for_metrics(loss.repeat(8)))
    return torch.cat(losses).mean()


def evaluate_truncated(model, eval_dataloader, eval_dataset, accelerator):
    losses = []
    for batch in eval_dataloader:
        with torch.no_grad():
            loss = model(**batch).loss
        losses.append(accelerator.gather(loss.repeat(8)))
    losses = torch.cat(losses)[: len(eval_dataset)]
    return losses.mean()


def main(model, optimizer, train_dataloader, eval_dataloader, eval_dataset):
    accelerator = Accelerator()
    model, optimizer, train_dataloader, eval_dataloader = accelerator.prepare(
        model, optimizer, train_dataloader, eval_dataloader
    )
    return evaluate(model, eval_dataloader, eval_dataset, accelerator)
