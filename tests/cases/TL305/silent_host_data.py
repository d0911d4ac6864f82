# A Python number turned into a tensor and sent to the GPU: the data is on the host, so
# `torch.tensor(x, device="cuda")` would copy it just the same.
import torch
import torch.distributed as dist

model = torch.nn.Linear(4, 1).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)


def all_reduce_mean(x):
    reduced = torch.tensor(x).cuda()
    dist.all_reduce(reduced)
    return reduced.item() / dist.get_world_size()


for step in range(1000):
    loss = model(torch.randn(8, 4, device="cuda")).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    all_reduce_mean(loss.item())
