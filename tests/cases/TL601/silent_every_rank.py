import torch
import torch.distributed as dist


def evaluate(model, loader, rank):
    correct = torch.zeros((), device="cuda")
    for x, y in loader:
        correct += (model(x.cuda()).argmax(1) == y.cuda()).sum()
    dist.all_reduce(correct)  # every rank, then only rank 0 prints
    if rank == 0:
        print(f"accuracy {correct.item() / len(loader.dataset):.3f}")
    dist.barrier()


def broadcast_seed(rank):
    seed = torch.zeros(1, dtype=torch.long, device="cuda")
    if rank == 0:
        seed.random_()
        dist.broadcast(seed, src=0)
    else:
        dist.broadcast(seed, src=0)  # the other ranks join in their own branch
    return seed


def save(model, rank, path):
    if rank == 0:
        torch.save(model.state_dict(), path)
    dist.barrier()


class State:
    def wait_for_everyone(self):
        dist.barrier()

    def main_process_first(self, is_main):
        # The others wait while the main process goes first, then it waits for them.
        if not is_main:
            self.wait_for_everyone()
        yield
        if is_main:
            self.wait_for_everyone()
