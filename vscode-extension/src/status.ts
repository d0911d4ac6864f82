/**
 * The "torchlint" language status item (shown with Python files): busy while the server starts
 * and while a runtime check runs, error severity when the server could not start or stopped.
 * Clicking it opens the logs.
 */

import * as vscode from 'vscode';
import { COMMANDS } from './commands';

export const STATUS_NAME = 'torchlint';

export class Status implements vscode.Disposable {
    private readonly item: vscode.LanguageStatusItem;
    private starting = false;
    private readonly runs = new Map<number, string>();
    private nextRun = 0;
    private state: { text: string; detail: string; severity: vscode.LanguageStatusSeverity } = {
        text: STATUS_NAME,
        detail: 'not started',
        severity: vscode.LanguageStatusSeverity.Information,
    };

    constructor() {
        this.item = vscode.languages.createLanguageStatusItem('torchlint.status', { language: 'python' });
        this.item.name = STATUS_NAME;
        this.item.command = { title: 'Show Logs', command: COMMANDS.showLogs };
        this.update();
    }

    setStarting(): void {
        this.starting = true;
        this.state = { text: STATUS_NAME, detail: 'starting…', severity: vscode.LanguageStatusSeverity.Information };
        this.update();
    }

    setRunning(detail: string): void {
        this.starting = false;
        this.state = { text: STATUS_NAME, detail, severity: vscode.LanguageStatusSeverity.Information };
        this.update();
    }

    setFailed(detail: string): void {
        this.starting = false;
        this.state = {
            text: `${STATUS_NAME}: not running`,
            detail,
            severity: vscode.LanguageStatusSeverity.Error,
        };
        this.update();
    }

    /** Marks a runtime check as running until the returned function is called. */
    runStarted(label: string): () => void {
        const id = this.nextRun++;
        this.runs.set(id, label);
        this.update();
        return () => {
            this.runs.delete(id);
            this.update();
        };
    }

    private update(): void {
        const running = [...this.runs.values()];
        this.item.busy = this.starting || running.length > 0;
        this.item.text = this.state.text;
        this.item.severity = this.state.severity;
        this.item.detail = running.length > 0 ? `running ${running.join(', ')}` : this.state.detail;
    }

    dispose(): void {
        this.item.dispose();
    }
}
