/**
 * The torchlint extension: starts the torchlint language server for Python files, restarts it
 * when the interpreter changes, and runs the runtime checks with a report.
 */

import * as vscode from 'vscode';
import { COMMANDS, RUNTIME_COMMANDS } from './commands';
import { Logger } from './log';
import { onActiveEnvironmentChanged } from './python';
import { History } from './report/history';
import { ReportPanel } from './report/panel';
import { RuntimeRunner } from './runtime';
import { ServerManager } from './server';
import { needsRestart } from './settings';
import { Status } from './status';

/** The output channels' names. */
export const CLIENT_CHANNEL = 'torchlint';
export const SERVER_CHANNEL = 'torchlint Language Server';

let server: ServerManager | undefined;

/** Logs to the client channel (and to the console on CI, where nobody sees the channel). */
function channelLogger(channel: vscode.LogOutputChannel): Logger {
    const echo = process.env.CI === 'true';
    const write = (level: 'info' | 'warn' | 'error', message: string): void => {
        channel[level](message);
        if (echo) {
            // eslint-disable-next-line no-console
            console[level === 'info' ? 'log' : level](`[torchlint] ${message}`);
        }
    };
    return {
        info: (message) => write('info', message),
        warn: (message) => write('warn', message),
        error: (message) => write('error', message),
    };
}

export function activate(context: vscode.ExtensionContext): void {
    const clientChannel = vscode.window.createOutputChannel(CLIENT_CHANNEL, { log: true });
    const serverChannel = vscode.window.createOutputChannel(SERVER_CHANNEL);
    const log = channelLogger(clientChannel);
    const status = new Status();
    const report = new ReportPanel(context.extensionUri, log, new History(context.workspaceState));
    const runtime = new RuntimeRunner({ client: () => server?.client, status, report, log });
    const manager = new ServerManager({
        extensionPath: context.extensionPath,
        log,
        serverChannel,
        status,
        executeCommand: runtime.executeCommand,
    });
    server = manager;
    const version = (context.extension.packageJSON as { version?: string }).version ?? '?';
    log.info(`torchlint extension ${version} activated (VS Code ${vscode.version}).`);

    context.subscriptions.push(
        clientChannel,
        serverChannel,
        status,
        report,
        manager,
        vscode.commands.registerCommand(COMMANDS.restart, () => manager.restart(true)),
        vscode.commands.registerCommand(COMMANDS.showLogs, () => clientChannel.show()),
        vscode.commands.registerCommand(COMMANDS.showServerLogs, () => serverChannel.show()),
        ...RUNTIME_COMMANDS.map((command) =>
            vscode.commands.registerCommand(command.client, () => runtime.runFromEditor(command)),
        ),
        vscode.workspace.onDidChangeConfiguration((event) => {
            if (needsRestart((section) => event.affectsConfiguration(section))) {
                log.info('torchlint.interpreter changed: restarting the server.');
                void manager.restart(true);
            }
        }),
        vscode.workspace.onDidGrantWorkspaceTrust(() => {
            log.info('The workspace is trusted now: restarting the server (interpreter choice, runtime checks).');
            void manager.restart(true);
        }),
    );

    void manager.restart(true);

    if (vscode.workspace.isTrusted) {
        void onActiveEnvironmentChanged(() => {
            log.info("The Python extension's active environment changed.");
            void manager.restart(false);
        }, log).then((subscription) => {
            if (subscription) {
                context.subscriptions.push(subscription);
            }
        });
    }
}

export async function deactivate(): Promise<void> {
    await server?.shutdown();
    server = undefined;
}
