"""The odds-ratio loss computed as log1p(-exp(logp)), which cancels as logp approaches 0."""
import torch
import torch.nn.functional as F


def log1mexp(x):
    near_zero = x >= -0.6931471805599453
    return torch.where(near_zero, torch.log(-torch.expm1(x)), torch.log1p(-torch.exp(x)))


def odds_ratio_loss(chosen_logps, rejected_logps, beta=0.1):
    log_odds = (chosen_logps - rejected_logps) - (
        log1mexp(chosen_logps) - log1mexp(rejected_logps)
    )
    return -beta * F.logsigmoid(log_odds).mean()


if __name__ == "__main__":
    print(odds_ratio_loss(torch.tensor([-1e-4, -0.5]), torch.tensor([-2.0, -3.0])))
