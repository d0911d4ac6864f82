import torch
from PIL import Image
from torch import nn
from torch.utils.data import DataLoader, Dataset


class InMemory(Dataset):
    """A TensorDataset in all but name: each item is an index into tensors it holds."""

    def __init__(self, x, y):
        self.x, self.y = x, y

    def __len__(self):
        return self.x.size(0)

    def __getitem__(self, idx):
        return self.x[idx], self.y[idx]


class InMemoryDict(Dataset):
    def __init__(self, n):
        self.users = torch.randint(0, 100, (n,))
        self.ratings = torch.rand(n)

    def __len__(self):
        return len(self.users)

    def __getitem__(self, idx):
        """One sample."""
        return {"user": self.users[idx], "rating": self.ratings[idx]}


class FromDisk(Dataset):
    """Opens and decodes an image per item: worker processes pay off."""

    def __init__(self, paths, labels):
        self.paths, self.labels = paths, labels

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, idx):
        image = Image.open(self.paths[idx]).convert("RGB")
        return torch.as_tensor(list(image.getdata())), self.labels[idx]


x, y = torch.randn(1000, 16), torch.randint(0, 2, (1000,))
tensors = DataLoader(InMemory(x, y), batch_size=32, shuffle=True)
records = InMemoryDict(1000)
dicts = DataLoader(records, batch_size=32, shuffle=True)
images = DataLoader(FromDisk(["a.png"] * 10, [0] * 10), batch_size=4, shuffle=True)  # expect: TL303

model = nn.Linear(16, 2).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(3):
    for xb, yb in tensors:
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(xb.cuda()), yb.cuda()).backward()
        optimizer.step()
    for batch in dicts:
        optimizer.zero_grad()
        model(batch["rating"].cuda().unsqueeze(1).expand(-1, 16)).sum().backward()
        optimizer.step()
    for pixels, labels in images:
        optimizer.zero_grad()
        model(pixels.float().cuda()[:, :16]).sum().backward()
        optimizer.step()
