import torch

model = torch.nn.Linear(10, 2).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = [(torch.randn(4, 10), torch.randint(0, 2, (4,)))] * 8

for epoch in range(3):
    running = 0.0
    for step, (x, y) in enumerate(loader):
        x, y = x.cuda(), y.cuda()
        optimizer.zero_grad()
        out = model(x)
        loss = torch.nn.functional.cross_entropy(out, y)
        loss.backward()
        optimizer.step()
        running += loss.item()  # expect: TL301
        preds = out.argmax(1).cpu().numpy()  # expect: TL301
        print(f"step {step}: {loss}")  # expect: TL301
        if step % 100 == 0:
            print(loss.item())
    print(running / len(loader), loss.item())
