import torch
from torch import nn

device = torch.device("cuda")
netG = nn.Sequential(nn.Linear(100, 784), nn.Tanh()).to(device)
netD = nn.Sequential(nn.Linear(784, 1)).to(device)
criterion = nn.BCEWithLogitsLoss()
optD = torch.optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
optG = torch.optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
loader = [torch.randn(64, 784) for _ in range(100)]

for epoch in range(25):
    for real in loader:
        real = real.to(device)
        b = real.size(0)
        noise = torch.randn(b, 100).to(device)  # expect: TL305
        real_labels = torch.ones(b, 1).cuda()  # expect: TL305
        fake_labels = torch.zeros(b, 1).to(device)  # expect: TL305
        fake = netG(noise)

        optD.zero_grad()
        lossD = criterion(netD(real), real_labels) + criterion(netD(fake.detach()), fake_labels)
        lossD.backward()
        optD.step()

        optG.zero_grad()
        lossG = criterion(netD(fake), real_labels)
        lossG.backward()
        optG.step()
