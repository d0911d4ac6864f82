/**
 * The server's work-done progress as a notification with a Cancel button.
 *
 * vscode-languageclient shows server-created progress in the status bar, where it cannot be
 * cancelled. The torchlint server creates progress only for the runtime checks (which take
 * seconds to minutes and can be stopped), so this feature takes over
 * `window/workDoneProgress/create`: registered after the built-in progress feature, its request
 * handler replaces that one. Cancel sends `window/workDoneProgress/cancel`, which stops the check.
 */

import * as vscode from 'vscode';
import {
    BaseLanguageClient,
    ClientCapabilities,
    FeatureState,
    ProgressToken,
    StaticFeature,
    WorkDoneProgress,
    WorkDoneProgressBegin,
    WorkDoneProgressCancelNotification,
    WorkDoneProgressCreateRequest,
    WorkDoneProgressReport,
} from 'vscode-languageclient/node';

class NotificationProgress {
    private subscription: vscode.Disposable | undefined;
    private progress: vscode.Progress<{ message?: string; increment?: number }> | undefined;
    private resolve: (() => void) | undefined;
    private finished = false;
    private reported = 0;
    private pending: { message?: string; percentage?: number } | undefined;

    constructor(
        private readonly client: BaseLanguageClient,
        private readonly token: ProgressToken,
        private readonly onDone: () => void,
    ) {
        this.subscription = client.onProgress(WorkDoneProgress.type, token, (value) => {
            switch (value.kind) {
                case 'begin':
                    this.begin(value);
                    break;
                case 'report':
                    this.report(value);
                    break;
                case 'end':
                    this.done();
                    break;
            }
        });
    }

    private begin(params: WorkDoneProgressBegin): void {
        void vscode.window.withProgress(
            {
                location: vscode.ProgressLocation.Notification,
                title: params.title,
                cancellable: params.cancellable ?? false,
            },
            (progress, cancellation) => {
                if (this.finished) {
                    return Promise.resolve();
                }
                this.progress = progress;
                cancellation.onCancellationRequested(() => {
                    void this.client.sendNotification(WorkDoneProgressCancelNotification.type, { token: this.token });
                });
                this.report(this.pending ?? params);
                return new Promise<void>((resolve) => {
                    this.resolve = resolve;
                });
            },
        );
    }

    private report(params: Pick<WorkDoneProgressReport, 'message' | 'percentage'>): void {
        if (!this.progress) {
            this.pending = { ...this.pending, ...params };
            return;
        }
        let increment: number | undefined;
        if (typeof params.percentage === 'number') {
            const percentage = Math.max(0, Math.min(100, params.percentage));
            increment = Math.max(0, percentage - this.reported);
            this.reported += increment;
        }
        this.progress.report({ message: params.message, increment });
    }

    done(): void {
        if (this.finished) {
            return;
        }
        this.finished = true;
        this.subscription?.dispose();
        this.subscription = undefined;
        this.resolve?.();
        this.resolve = undefined;
        this.onDone();
    }
}

export class NotificationProgressFeature implements StaticFeature {
    private readonly parts = new Set<NotificationProgress>();

    constructor(private readonly client: BaseLanguageClient) {}

    fillClientCapabilities(capabilities: ClientCapabilities): void {
        capabilities.window = { ...capabilities.window, workDoneProgress: true };
    }

    getState(): FeatureState {
        return { kind: 'static' };
    }

    initialize(): void {
        this.client.onRequest(WorkDoneProgressCreateRequest.type, ({ token }) => {
            const part: NotificationProgress = new NotificationProgress(this.client, token, () =>
                this.parts.delete(part),
            );
            this.parts.add(part);
        });
    }

    clear(): void {
        for (const part of [...this.parts]) {
            part.done();
        }
        this.parts.clear();
    }
}
