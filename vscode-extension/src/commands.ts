/**
 * Command ids. The server's commands (listed in its `executeCommandProvider`) are registered in
 * VS Code by vscode-languageclient itself, so the client's own commands must use other ids
 * (`torchlint.client.*`): VS Code refuses a second registration of an id.
 */

/** The extension's commands (contributed in package.json). */
export const COMMANDS = {
    restart: 'torchlint.client.restart',
    showLogs: 'torchlint.client.showLogs',
    showServerLogs: 'torchlint.client.showServerLogs',
    runOverfit: 'torchlint.client.runOverfit',
    runGrads: 'torchlint.client.runGrads',
    profile: 'torchlint.client.profile',
} as const;

/** A runtime check: the server command that runs it and the client command that asks for it. */
export interface RuntimeCommand {
    server: string;
    client: string;
    /** As the server names it in its messages. */
    title: string;
}

export const RUNTIME_COMMANDS: readonly RuntimeCommand[] = [
    { server: 'torchlint.runtime.overfit', client: COMMANDS.runOverfit, title: 'Overfit one batch' },
    { server: 'torchlint.runtime.grads', client: COMMANDS.runGrads, title: 'Gradient scan' },
    { server: 'torchlint.runtime.profile', client: COMMANDS.profile, title: 'Profile step' },
];

/** Every command the server registers (`torchlint/lsp/server.py`). */
export const SERVER_COMMANDS: readonly string[] = [
    ...RUNTIME_COMMANDS.map((command) => command.server),
    'torchlint.showDebugInformation',
];

export function runtimeCommandForServer(command: string): RuntimeCommand | undefined {
    return RUNTIME_COMMANDS.find((candidate) => candidate.server === command);
}
