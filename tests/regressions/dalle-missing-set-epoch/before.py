"""A DistributedSampler's loader goes through a distributed backend's wrapper before the epoch
loop, which never reseeds the sampler."""
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


class Backend:
    def distribute(self, model, optimizer, loader):
        return torch.nn.parallel.DistributedDataParallel(model), optimizer, loader


distr_backend = Backend()
dist.init_process_group("nccl")
dataset = TensorDataset(torch.randint(0, 1000, (4096, 64)), torch.rand(4096, 3, 32, 32))
data_sampler = DistributedSampler(dataset, num_replicas=dist.get_world_size(), rank=dist.get_rank())
dl = DataLoader(dataset, batch_size=8, shuffle=False, drop_last=True, sampler=data_sampler)
model = torch.nn.Linear(64, 3 * 32 * 32).cuda()
opt = torch.optim.Adam(model.parameters(), lr=3e-4)
distr_model, distr_opt, distr_dl = distr_backend.distribute(model, opt, dl)

for epoch in range(20):
    for i, (text, images) in enumerate(distr_dl):
        loss = (distr_model(text.float().cuda()) - images.flatten(1).cuda()).pow(2).mean()
        distr_opt.zero_grad()
        loss.backward()
        distr_opt.step()
