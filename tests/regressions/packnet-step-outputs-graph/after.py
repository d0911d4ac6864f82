import torch


class HorovodTrainer:
    def __init__(self, module, optimizer):
        self.module = module
        self.optimizer = optimizer

    def train(self, dataloader):
        self.module.train()
        outputs = []
        for i, batch in enumerate(dataloader):
            self.optimizer.zero_grad()
            batch = {k: v.cuda() for k, v in batch.items()}
            output = self.module.training_step(batch, i)
            output["loss"].backward()
            self.optimizer.step()
            output["loss"] = output["loss"].detach()
            outputs.append(output)
            print(f"loss {output['loss'].item():.4f}")
        return self.module.training_epoch_end(outputs)
