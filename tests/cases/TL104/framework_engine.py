# A DeepSpeed engine's `step()` is the optimizer step: before the backward it applies the
# previous iteration's gradients.
import deepspeed


def train(args, model, loader):
    model_engine, _, _, _ = deepspeed.initialize(args=args, model=model)
    for batch in loader:
        model_engine.step()  # expect: TL104
        loss = model_engine(batch).mean()
        model_engine.backward(loss)
