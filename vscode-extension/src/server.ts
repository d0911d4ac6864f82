/**
 * Starts, stops and restarts the torchlint language server (`<python> -m torchlint lsp` over
 * stdio, through vscode-languageclient).
 *
 * Restarts are serialised (serial.ts): one at a time, at most one queued. Before each start the
 * interpreter is resolved (interpreter.ts) and checked with `import torchlint`; a failure names the
 * interpreter tried and the fix, and leaves the status item in error.
 *
 * The server process runs in the first workspace folder when the workspace is trusted. In an
 * untrusted one it runs in the extension's own folder instead: `python -m` puts the working
 * directory first on `sys.path`, and a workspace must not be able to shadow `torchlint` with
 * code of its own.
 */

import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import {
    ConfigurationParams,
    LanguageClient,
    LanguageClientOptions,
    Middleware,
    RevealOutputChannelOn,
    ServerOptions,
    State,
} from 'vscode-languageclient/node';
import { COMMANDS } from './commands';
import {
    Bundle,
    bundledCheckScript,
    bundledServerCommand,
    bundleIn,
    checkInterpreter,
    CheckResult,
    describeSource,
    ExecFn,
    formatCommand,
    Interpreter,
    resolveInterpreter,
    serverCommand,
    substituteVariables,
} from './interpreter';
import { Logger } from './log';
import { NotificationProgressFeature } from './progress';
import { activeInterpreter } from './python';
import { SerialQueue } from './serial';
import { importStrategy, mapConfigurationAnswer, originOf, SECTION, SERVER_KEYS } from './settings';
import { Status } from './status';

export const CLIENT_ID = 'torchlint';
export const CLIENT_NAME = 'torchlint';

export interface ServerDeps {
    extensionPath: string;
    log: Logger;
    serverChannel: vscode.OutputChannel;
    status: Status;
    executeCommand: NonNullable<Middleware['executeCommand']>;
}

const execFileAsync: ExecFn = (file, args, options) =>
    new Promise((resolve, reject) => {
        execFile(file, args, { ...options, windowsHide: true, encoding: 'utf8' }, (error, stdout, stderr) => {
            if (error) {
                reject(Object.assign(error, { stdout, stderr }));
            } else {
                resolve({ stdout, stderr });
            }
        });
    });

function sameCommand(a: Interpreter | undefined, b: Interpreter): boolean {
    return a !== undefined && a.command.length === b.command.length && a.command.every((part, i) => part === b.command[i]);
}

export class ServerManager implements vscode.Disposable {
    private current: LanguageClient | undefined;
    private interpreter: Interpreter | undefined;
    private forceNext = false;
    private disposed = false;
    private readonly queue: SerialQueue;

    constructor(private readonly deps: ServerDeps) {
        this.queue = new SerialQueue(
            () => this.restartNow(),
            (error) => {
                deps.log.error(`Restart failed: ${String(error)}`);
                deps.status.setFailed(`could not start: ${String(error)}`);
            },
        );
    }

    /** The running client, if any. */
    get client(): LanguageClient | undefined {
        return this.current;
    }

    /**
     * Restarts the server (queued behind a restart in progress). Without `force`, a running server
     * whose interpreter would not change is left alone (the Python extension reports environment
     * changes that do not change the interpreter).
     */
    restart(force = true): Promise<void> {
        this.forceNext ||= force;
        return this.queue.request();
    }

    private workspaceFolder(): vscode.WorkspaceFolder | undefined {
        const active = vscode.window.activeTextEditor?.document.uri;
        return (active && vscode.workspace.getWorkspaceFolder(active)) ?? vscode.workspace.workspaceFolders?.[0];
    }

    private async resolve(folder: vscode.WorkspaceFolder | undefined): Promise<Interpreter> {
        const trusted = vscode.workspace.isTrusted;
        const setting = vscode.workspace.getConfiguration(SECTION, folder?.uri).inspect<unknown>('interpreter');
        return resolveInterpreter({
            setting,
            trusted,
            pythonExtension: () => activeInterpreter(folder?.uri, this.deps.log),
            platform: process.platform,
            workspaceFolder: folder?.uri.fsPath,
            userHome: os.homedir(),
            env: process.env,
        });
    }

    private async restartNow(): Promise<void> {
        if (this.disposed) {
            return;
        }
        const force = this.forceNext;
        this.forceNext = false;
        const { log, status } = this.deps;
        const folder = this.workspaceFolder();
        if (!this.current) {
            status.setStarting();
        }
        const interpreter = await this.resolve(folder);
        if (!force && this.current?.isRunning() && sameCommand(this.interpreter, interpreter)) {
            log.info(`Interpreter unchanged (${formatCommand(interpreter.command)}); the server keeps running.`);
            return;
        }
        await this.stop();
        status.setStarting();
        const trusted = vscode.workspace.isTrusted;
        const cwd = trusted && folder ? folder.uri.fsPath : this.deps.extensionPath;
        const source = describeSource(interpreter.source, process.platform);
        log.info(
            `Interpreter: ${formatCommand(interpreter.command)} (from ${source}; ` +
                `workspace ${trusted ? 'trusted' : 'not trusted'})`,
        );
        const launch = await this.chooseLaunch(interpreter, cwd, folder);
        if (this.disposed) {
            return;
        }
        this.interpreter = interpreter;
        if (!launch.check.ok) {
            log.error(launch.check.message);
            if (launch.check.detail) {
                log.error(launch.check.detail);
            }
            status.setFailed(launch.check.message);
            void this.showStartError(launch.check.message);
            return;
        }
        const check = launch.check;
        const { command, args } = launch.bundle
            ? bundledServerCommand(interpreter, launch.bundle)
            : serverCommand(interpreter);
        const origin = launch.bundle ? 'bundled with the extension' : 'from the environment';
        log.info(
            `Server run command: ${formatCommand([command, ...args])} (torchlint ${check.version} ${origin}, ` +
                `working directory ${cwd})`,
        );

        const serverOptions: ServerOptions = { command, args, options: { cwd, env: { ...process.env } } };
        const client = new LanguageClient(CLIENT_ID, CLIENT_NAME, serverOptions, this.clientOptions());
        client.registerFeature(new NotificationProgressFeature(client));
        const detail =
            `torchlint ${check.version}${launch.bundle ? ' (bundled)' : ''} · ` + formatCommand(interpreter.command);
        client.onDidChangeState(({ newState }) => {
            if (this.current !== client) {
                return;
            }
            if (newState === State.Running) {
                status.setRunning(detail);
            } else if (newState === State.Starting) {
                status.setStarting();
            } else {
                status.setFailed('the language server stopped; see "torchlint: Show Logs"');
            }
        });
        this.current = client;
        try {
            await client.start();
            status.setRunning(detail);
        } catch (error) {
            const message = `torchlint: the language server (${formatCommand([command, ...args])}) failed to start: ${String(error)}`;
            log.error(message);
            status.setFailed(message);
            void this.showStartError(message);
        }
    }

    /**
     * Which torchlint the server runs, by `torchlint.importStrategy` (as Microsoft's Python tool
     * extensions do): `fromEnvironment` (the default) uses the interpreter's own torchlint, and
     * the copy this .vsix carries when the interpreter has none; `useBundled` always uses the
     * carried copy. Either way the interpreter is the user's, so the runtime checks run the
     * script with its own torch.
     */
    private async chooseLaunch(
        interpreter: Interpreter,
        cwd: string,
        folder: vscode.WorkspaceFolder | undefined,
    ): Promise<{ check: CheckResult; bundle?: Bundle }> {
        const { log } = this.deps;
        const strategy = importStrategy(vscode.workspace.getConfiguration(SECTION, folder?.uri).get('importStrategy'));
        const bundle = bundleIn(this.deps.extensionPath, existsSync);
        const options = { platform: process.platform, cwd };
        const bundled = async (): Promise<CheckResult> => {
            if (!bundle) {
                return {
                    ok: false,
                    message:
                        'torchlint could not start: "torchlint.importStrategy" is "useBundled", but this copy of the ' +
                        'extension carries no torchlint (install the platform-specific .vsix, or use "fromEnvironment").',
                    detail: '',
                };
            }
            const result = await checkInterpreter(interpreter, execFileAsync, {
                ...options,
                script: bundledCheckScript(bundle),
            });
            if (result.ok) {
                return result;
            }
            return {
                ok: false,
                message:
                    `torchlint could not start: the torchlint bundled with the extension does not run with ` +
                    `"${formatCommand(interpreter.command)}" (${result.message.replace(/^torchlint could not start: /, '')}). ` +
                    'The bundle carries Python 3.10 to 3.13; set "torchlint.interpreter" to one of those.',
                detail: result.detail,
            };
        };
        if (strategy === 'useBundled') {
            log.info('torchlint.importStrategy is useBundled: using the torchlint bundled with the extension.');
            return { check: await bundled(), bundle };
        }
        const own = await checkInterpreter(interpreter, execFileAsync, options);
        if (own.ok || !bundle) {
            return { check: own };
        }
        log.info(
            `${formatCommand(interpreter.command)} has no torchlint (${own.message}); ` +
                'using the torchlint bundled with the extension.',
        );
        return { check: await bundled(), bundle };
    }

    private clientOptions(): LanguageClientOptions {
        return {
            documentSelector: [
                { scheme: 'file', language: 'python' },
                { scheme: 'untitled', language: 'python' },
                // Jupyter notebooks' code cells: hover, quick fixes, fix-all and lenses there
                // too (their text reaches the server through notebook synchronisation).
                { scheme: 'vscode-notebook-cell', language: 'python' },
            ],
            diagnosticCollectionName: 'torchlint',
            outputChannel: this.deps.serverChannel,
            revealOutputChannelOn: RevealOutputChannelOn.Never,
            middleware: {
                executeCommand: this.deps.executeCommand,
                workspace: {
                    // The server's settings, with runtime.enable forced off in an untrusted workspace.
                    configuration: async (params: ConfigurationParams, token, next) => {
                        const answer = await next(params, token);
                        return Array.isArray(answer)
                            ? mapConfigurationAnswer(params.items, answer, vscode.workspace.isTrusted, (scope) =>
                                  this.describeScope(scope),
                              )
                            : answer;
                    },
                },
            },
        };
    }

    /** Where each server setting of a scope was set, and `${workspaceFolder}` etc. for its paths. */
    private describeScope(scopeUri: string | undefined): {
        origins: Record<string, string>;
        expand: (value: string) => string;
    } {
        const uri = scopeUri ? vscode.Uri.parse(scopeUri) : undefined;
        const folder = uri ? vscode.workspace.getWorkspaceFolder(uri) : undefined;
        const config = vscode.workspace.getConfiguration(SECTION, uri);
        const origins: Record<string, string> = {};
        for (const key of [...SERVER_KEYS, 'runtime', 'lint.args']) {
            const origin = originOf(config.inspect(key), folder?.name, vscode.workspace.workspaceFile === undefined);
            if (origin) {
                origins[key.split('.')[0]] = origin; // the server looks up a problem's first part
            }
        }
        const expand = (value: string): string => {
            const expanded = substituteVariables(value, {
                workspaceFolder: folder?.uri.fsPath,
                userHome: os.homedir(),
                env: process.env,
            });
            return folder && !path.isAbsolute(expanded) ? path.join(folder.uri.fsPath, expanded) : expanded;
        };
        return { origins, expand };
    }

    private async showStartError(message: string): Promise<void> {
        const choice = await vscode.window.showErrorMessage(message, 'Open Settings', 'Show Logs');
        if (choice === 'Open Settings') {
            void vscode.commands.executeCommand('workbench.action.openSettings', 'torchlint.interpreter');
        } else if (choice === 'Show Logs') {
            void vscode.commands.executeCommand(COMMANDS.showLogs);
        }
    }

    private async stop(): Promise<void> {
        const client = this.current;
        this.current = undefined;
        if (!client || client.state === State.Stopped) {
            return; // never started, or already gone
        }
        try {
            await client.dispose(5000); // the server stops running checks for up to 3 s
        } catch (error) {
            this.deps.log.warn(`Stopping the language server: ${String(error)}`);
        }
    }

    /** Stops the server for good (deactivation). */
    async shutdown(): Promise<void> {
        this.disposed = true;
        await this.stop();
    }

    dispose(): void {
        void this.shutdown();
    }
}
