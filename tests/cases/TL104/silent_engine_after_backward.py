# The engine steps after its backward; `env.step(action)` of a simulator is not an optimizer.
import deepspeed


def train(args, model, loader, env):
    model_engine, _, _, _ = deepspeed.initialize(args=args, model=model)
    for batch in loader:
        loss = model_engine(batch).mean()
        model_engine.backward(loss)
        model_engine.step()


def rollout(policy, engine, optimizer, env, steps):
    for _ in range(steps):
        engine.step(policy)
        loss = policy(env.observe()).mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
