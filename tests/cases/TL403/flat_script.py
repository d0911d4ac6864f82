import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler, RandomSampler

dist.init_process_group("nccl")
train_set = torch.utils.data.TensorDataset(torch.randn(512, 8), torch.randn(512, 1))
sampler = DistributedSampler(train_set)
loader = DataLoader(train_set, batch_size=32, shuffle=True, sampler=sampler)  # expect: TL403
extra = DataLoader(train_set, 32, True, RandomSampler(train_set))  # expect: TL403
