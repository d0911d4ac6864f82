# A DeepSpeed engine's `step()` updates the weights and clears the gradients itself.
import deepspeed


def train(args, model, loader):
    model_engine, optimizer, _, _ = deepspeed.initialize(
        args=args, model=model, model_parameters=model.parameters()
    )
    for batch in loader:
        loss = model_engine(batch).mean()
        model_engine.backward(loss)
        model_engine.step()
