/**
 * The report webview: one panel, reused for every run (its title names the check and the script).
 * Scripts are enabled only for the bundled dist/webview.js; links in the report post
 * `{type: 'open', file, line}` and the editor jumps there.
 */

import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import { Logger } from '../log';
import { renderReportHtml } from './html';
import { History, recordOf } from './history';
import { buildReport } from './model';

export const REPORT_VIEW_TYPE = 'torchlint.report';

interface OpenMessage {
    type: 'open';
    file: string;
    line: number;
}

function isOpenMessage(message: unknown): message is OpenMessage {
    if (typeof message !== 'object' || message === null) {
        return false;
    }
    const candidate = message as Record<string, unknown>;
    return (
        candidate.type === 'open' &&
        typeof candidate.file === 'string' &&
        candidate.file !== '' &&
        typeof candidate.line === 'number' &&
        Number.isInteger(candidate.line) &&
        candidate.line >= 1
    );
}

function isRerunMessage(message: unknown): boolean {
    return typeof message === 'object' && message !== null && (message as { type?: unknown }).type === 'rerun';
}

export class ReportPanel implements vscode.Disposable {
    private panel: vscode.WebviewPanel | undefined;
    private shown: Record<string, unknown> | undefined;
    /** Runs the check of the report shown again (set by the runtime runner). */
    onRerun: ((envelope: Record<string, unknown>) => void) | undefined;

    constructor(
        private readonly extensionUri: vscode.Uri,
        private readonly log: Logger,
        private readonly history?: History,
    ) {}

    /** Shows (or replaces) the report of a runtime envelope, with the script's last runs. */
    async show(envelope: Record<string, unknown>): Promise<void> {
        const record = recordOf(envelope, Date.now());
        if (record && this.history) {
            await this.history.add(record);
        }
        const earlier = record && this.history ? this.history.of(record.script, record.check) : [];
        const model = buildReport(envelope, earlier);
        this.shown = envelope;
        const distUri = vscode.Uri.joinPath(this.extensionUri, 'dist');
        if (!this.panel) {
            this.panel = vscode.window.createWebviewPanel(
                REPORT_VIEW_TYPE,
                model.title,
                { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true },
                { enableScripts: true, localResourceRoots: [distUri], enableFindWidget: true },
            );
            this.panel.onDidDispose(() => {
                this.panel = undefined;
            });
            this.panel.webview.onDidReceiveMessage((message: unknown) => {
                if (isOpenMessage(message)) {
                    void this.open(message.file, message.line);
                } else if (isRerunMessage(message) && this.shown && this.onRerun) {
                    this.onRerun(this.shown);
                }
            });
        } else {
            this.panel.reveal(undefined, true);
        }
        const webview = this.panel.webview;
        this.panel.title = model.title;
        webview.html = renderReportHtml(model, {
            cspSource: webview.cspSource,
            nonce: randomBytes(18).toString('base64'),
            scriptUri: webview.asWebviewUri(vscode.Uri.joinPath(distUri, 'webview.js')).toString(),
        });
        this.log.info(`Report: ${model.title}: ${model.headline}`);
    }

    private async open(file: string, line: number): Promise<void> {
        const position = new vscode.Position(line - 1, 0);
        try {
            const editor = await vscode.window.showTextDocument(vscode.Uri.file(file), {
                viewColumn: vscode.ViewColumn.One,
                selection: new vscode.Range(position, position),
            });
            editor.revealRange(new vscode.Range(position, position), vscode.TextEditorRevealType.InCenterIfOutsideViewport);
        } catch (error) {
            this.log.error(`Could not open ${file}:${line}: ${String(error)}`);
            void vscode.window.showErrorMessage(`torchlint: cannot open ${file}:${line}.`);
        }
    }

    dispose(): void {
        this.panel?.dispose();
    }
}
