# What a guard depends on, read through: an early return on a periodic predicate, a predicate
# resolved through its body, a flag assigned a step-counter condition (all periodic, silent);
# a branch on the configured loss type (loop-invariant: a per-step sync when it is on).
import argparse

import torch

parser = argparse.ArgumentParser()
parser.add_argument("--loss", default="r1")
args = parser.parse_args()
model = torch.nn.Linear(4, 1).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)


def is_report_step(step):
    return step % 100 == 0


def train_step(step, x, metrics):
    optimizer.zero_grad()
    loss = model(x).mean()
    loss.backward()
    optimizer.step()
    if not metrics.should_log(step):
        return
    print(loss.item())


for step in range(1000):
    x = torch.randn(8, 4, device="cuda")
    train_step(step, x, None)
    optimizer.zero_grad()
    loss = model(x).mean()
    loss.backward()
    optimizer.step()
    if is_report_step(step):
        print(loss.item())
    log_now = step % 50 == 0
    if log_now:
        print(loss.item())
    if args.loss == "r1":
        print(loss.item())  # expect: TL301
