import torch

policy = torch.nn.Linear(4, 2)
optimizer = torch.optim.Adam(policy.parameters())


def run(env, episodes):
    for episode in range(episodes):
        state = env.reset()
        for t in range(1000):
            action = policy(torch.as_tensor(state)).argmax()
            state, reward, done, _ = env.step(action.item())
            loss = -policy(torch.as_tensor(state)).max()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            if done:
                break


def run_vectorized(envs, actor, q_optimizer, steps):
    obs = envs.reset()
    for global_step in range(steps):
        actions = actor(torch.as_tensor(obs)).detach().cpu().numpy()
        obs, rewards, dones, infos = envs.step(actions)
        q_loss = actor(torch.as_tensor(obs)).pow(2).mean()
        q_optimizer.zero_grad()
        q_loss.backward()
        q_optimizer.step()
        alpha = q_loss.detach().exp().item()
