class Trainer:
    def __init__(self, model, optimizer, criterion):
        self.model = model
        self.optimizer = optimizer
        self.criterion = criterion

    def train_step(self, batch):
        x, y = batch
        loss = self.criterion(self.model(x), y)
        loss.backward()
        self.optimizer.step()
        return loss

    def clean_step(self, batch):
        self.optimizer.zero_grad()
        return self.train_step(batch)


class LoggingTrainer(Trainer):
    def log(self, loss):
        print(loss)
