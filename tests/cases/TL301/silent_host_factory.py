# A timestep drawn on the CPU (`device="cpu"`, or no device at all) is read with `.item()`:
# no device sync, even in a loop that trains on the GPU.
import torch

model = torch.nn.Linear(4, 1).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

for step in range(1000):
    x = torch.randn(8, 4, device="cuda")
    timesteps = torch.randint(0, 1000, (1,), device="cpu")
    timestep = timesteps.item()
    noise_level = torch.rand(1).item()
    loss = model(x * noise_level).mean() * timestep
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
