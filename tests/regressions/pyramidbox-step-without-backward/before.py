"""A face detector trained by iteration count, with two heads' losses summed."""

import torch


def adjust_learning_rate(optimizer, gamma, step):
    for param_group in optimizer.param_groups:
        param_group["lr"] = 1e-3 * (gamma**step)


def train(net, criterion, data_loader, max_iter, stepvalues, gamma=0.1):
    optimizer = torch.optim.SGD(net.parameters(), lr=1e-3, momentum=0.9)
    step_index = 0
    batch_iterator = iter(data_loader)
    for iteration in range(max_iter):
        if iteration in stepvalues:
            step_index += 1
            adjust_learning_rate(optimizer, gamma, step_index)
        images, targets = next(batch_iterator)
        out = net(images)
        # backprop
        optimizer.zero_grad()
        loss_l, loss_c = criterion(out[0:3], targets)
        loss_l_head, loss_c_head = criterion(out[3:6], targets)
        loss = loss_l + loss_c + 0.5 * loss_l_head + 0.5 * loss_c_head
        optimizer.step()
