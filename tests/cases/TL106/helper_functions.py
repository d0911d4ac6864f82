import torch
import torch.nn.functional as F


def train_one_epoch(model, loader, optimizer, device):
    model.train()
    for images, labels in loader:
        images, labels = images.to(device), labels.to(device)
        optimizer.zero_grad()
        loss = F.cross_entropy(model(images), labels)
        loss.backward()
        optimizer.step()


def evaluate(model, loader, device):
    model.eval()
    total_loss, correct = 0.0, 0
    for images, labels in loader:
        images, labels = images.to(device), labels.to(device)
        outputs = model(images)  # expect: TL106
        total_loss += F.cross_entropy(outputs, labels, reduction="sum").item()
        correct += (outputs.argmax(dim=1) == labels).sum().item()
    return total_loss, correct


def predict(net, batch):
    return net(batch).softmax(dim=-1)  # expect: TL106


def collect_predictions(net, loader):
    net.eval()
    preds = []
    for batch in loader:
        preds.append(predict(net, batch))
    return torch.cat(preds)


def main(model, train_loader, val_loader, test_loader):
    device = torch.device("cuda")
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    for epoch in range(20):
        train_one_epoch(model, train_loader, optimizer, device)
        val_loss, val_correct = evaluate(model, val_loader, device)
        print(epoch, val_loss, val_correct)
    return collect_predictions(model, test_loader)
