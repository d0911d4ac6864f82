import torch


def log_metrics(loss, outputs, targets):
    acc = (outputs.argmax(1) == targets).float().mean()
    return float(loss), acc.item()  # expect: TL301, TL301


def train(model, loader, optimizer, device):
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        optimizer.zero_grad()
        outputs = model(x)
        loss = torch.nn.functional.cross_entropy(outputs, y)
        loss.backward()
        optimizer.step()
        log_metrics(loss, outputs, y)


def train_logged(model, loader, epoch):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in loader:
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        print(f"epoch {epoch}: loss {loss}")  # expect: TL301


def train_until(model, x, optimizer, max_steps):
    running = 0.0
    for step in range(10**9):
        if step >= max_steps:
            break
        optimizer.zero_grad()
        loss = model(x).pow(2).mean()
        loss.backward()
        optimizer.step()
        running += loss.item()  # expect: TL301
    return running
