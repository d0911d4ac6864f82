class Experience:
    def __init__(self, action_mask, returns):
        self.action_mask, self.returns = action_mask, returns

    def to_device(self, device):
        self.action_mask = self.action_mask.to(device)
        self.returns = self.returns.to(device)


def training_step(model, optimizer, experience):
    loss = (model(experience.returns) * experience.action_mask).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    # on the device: `fit` moved the batch in place before the call
    return experience.action_mask.sum().item()  # expect: TL301


def fit(model, optimizer, buffer, device):
    for experience in buffer:
        experience.to_device(device)
        training_step(model, optimizer, experience)
