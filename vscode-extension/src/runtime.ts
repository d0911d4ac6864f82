/**
 * The runtime checks from the editor: the client commands (active file, cursor line) and the
 * server's own commands behind the code lenses (through `middleware.executeCommand`). Both send
 * `workspace/executeCommand` to the server, mark the status item busy while it runs, and show the
 * report of the envelope it answers.
 *
 * The server shows the progress (a cancellable notification, see progress.ts), publishes the
 * findings as diagnostics and shows the summary; this side adds the trust gate, saves the file
 * first (the check runs the file on disk) and opens the report.
 */

import * as path from 'node:path';
import * as vscode from 'vscode';
import { ExecuteCommandRequest, LanguageClient } from 'vscode-languageclient/node';
import { COMMANDS, RUNTIME_COMMANDS, RuntimeCommand, runtimeCommandForServer } from './commands';
import { Logger } from './log';
import { ReportPanel } from './report/panel';
import { isCancelled, isEnvelope } from './report/model';
import { Status } from './status';

export interface RuntimeDeps {
    client: () => LanguageClient | undefined;
    status: Status;
    report: ReportPanel;
    log: Logger;
}

/** The message of a runtime command invoked in an untrusted workspace. */
export function untrustedMessage(title: string): string {
    return (
        `torchlint: ${title} is disabled in Restricted Mode: it runs your training script, ` +
        'and this workspace is not trusted. Trust the workspace to use the runtime checks.'
    );
}

export class RuntimeRunner {
    constructor(private readonly deps: RuntimeDeps) {
        deps.report.onRerun = (envelope) => void this.rerun(envelope);
    }

    /**
     * The report's "Run again": the same check of the same script, through the server command a
     * lens sends (so the file is saved first and the result ends in the report again).
     */
    async rerun(envelope: Record<string, unknown>): Promise<void> {
        const command = RUNTIME_COMMANDS.find((candidate) => candidate.server.endsWith(`.${String(envelope.check)}`));
        const script = typeof envelope.script === 'string' ? envelope.script : undefined;
        if (!command || !script) {
            return;
        }
        this.deps.log.info(`${command.title}: run again on ${script}`);
        await vscode.commands.executeCommand(command.server, vscode.Uri.file(script).toString(), 0);
    }

    /** A client command: run the check on the active editor's file at the cursor line. */
    async runFromEditor(command: RuntimeCommand): Promise<void> {
        if (!vscode.workspace.isTrusted) {
            this.refuseUntrusted(command);
            return;
        }
        const editor = vscode.window.activeTextEditor;
        if (!editor || editor.document.languageId !== 'python') {
            void vscode.window.showInformationMessage(
                `torchlint: ${command.title} runs a Python training script: open one in the editor first.`,
            );
            return;
        }
        const document = editor.document;
        if (document.isUntitled || document.uri.scheme !== 'file') {
            void vscode.window.showWarningMessage(
                `torchlint: ${command.title} runs files on disk: save ${path.basename(document.fileName)} first.`,
            );
            return;
        }
        const client = this.deps.client();
        if (!client || !client.isRunning()) {
            const choice = await vscode.window.showErrorMessage(
                `torchlint: ${command.title} needs the torchlint language server, which is not running.`,
                'Show Logs',
            );
            if (choice === 'Show Logs') {
                void vscode.commands.executeCommand(COMMANDS.showLogs);
            }
            return;
        }
        if (document.isDirty) {
            await document.save();
        }
        const uri = client.code2ProtocolConverter.asUri(document.uri);
        const line = editor.selection.active.line;
        await this.track(command, path.basename(document.fileName), () =>
            client.sendRequest(ExecuteCommandRequest.type, { command: command.server, arguments: [uri, line] }),
        );
    }

    /**
     * `middleware.executeCommand`: a code lens (or anything else) ran one of the server's commands.
     * Runtime checks go through the trust gate and end in the report; other commands pass through.
     */
    readonly executeCommand = async (
        command: string,
        args: unknown[],
        next: (command: string, args: unknown[]) => unknown,
    ): Promise<unknown> => {
        const runtime = runtimeCommandForServer(command);
        if (!runtime) {
            return next(command, args);
        }
        if (!vscode.workspace.isTrusted) {
            this.refuseUntrusted(runtime);
            return undefined;
        }
        const uri = typeof args[0] === 'string' ? args[0] : undefined;
        const document = uri ? vscode.workspace.textDocuments.find((doc) => doc.uri.toString() === uri) : undefined;
        if (document?.isDirty && !document.isUntitled) {
            await document.save();
        }
        const name = document ? path.basename(document.fileName) : uri ? path.basename(vscode.Uri.parse(uri).path) : '';
        return this.track(runtime, name, async () => next(command, args));
    };

    private refuseUntrusted(command: RuntimeCommand): void {
        this.deps.log.warn(`${command.title}: refused, the workspace is not trusted.`);
        void vscode.window.showWarningMessage(untrustedMessage(command.title), 'Manage Workspace Trust').then((choice) => {
            if (choice) {
                void vscode.commands.executeCommand('workbench.trust.manage');
            }
        });
    }

    private async track(command: RuntimeCommand, fileName: string, send: () => Promise<unknown>): Promise<unknown> {
        const label = fileName ? `${command.title} on ${fileName}` : command.title;
        const finished = this.deps.status.runStarted(label);
        this.deps.log.info(`${label}: started`);
        try {
            const result = await send();
            this.handleResult(label, result);
            return result;
        } catch (error) {
            this.deps.log.error(`${label}: the request failed: ${String(error)}`);
            void vscode.window.showErrorMessage(`torchlint: ${label} failed: ${String(error)}`);
            return undefined;
        } finally {
            finished();
        }
    }

    private handleResult(label: string, result: unknown): void {
        if (isEnvelope(result)) {
            this.deps.log.info(`${label}: ${String(result.summary)}`);
            if (isCancelled(result)) {
                return;
            }
            void this.deps.report.show(result);
            return;
        }
        // A refusal or an internal failure: the server has already shown its message.
        const message =
            typeof result === 'object' && result !== null && 'message' in result
                ? String((result as { message: unknown }).message)
                : JSON.stringify(result);
        this.deps.log.warn(`${label}: no report: ${message}`);
    }
}
