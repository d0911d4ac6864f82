import torch

model = torch.nn.Linear(8, 2)
images = [torch.randn(1, 8, requires_grad=True) for _ in range(3)]
maps = []
for image in images:
    score = model(image)[0, 1]
    score.backward()
    maps.append(image.grad.abs())
