/**
 * Runs an async task one at a time, with at most one more queued: a request while the task runs
 * queues one run after it; further requests meanwhile join that queued run. So a burst of setting
 * changes restarts the server at most twice (the running restart, then one with the latest state),
 * never in parallel.
 */
export class SerialQueue {
    private running: Promise<void> | undefined;
    private queued: Promise<void> | undefined;

    constructor(
        private readonly task: () => Promise<void>,
        private readonly onError: (error: unknown) => void = () => undefined,
    ) {}

    /** Resolves when a run that started after this request has finished (never rejects). */
    request(): Promise<void> {
        if (this.queued) {
            return this.queued;
        }
        if (this.running) {
            const after = this.running;
            this.queued = after.then(() => {
                this.queued = undefined;
                return this.start();
            });
            return this.queued;
        }
        return this.start();
    }

    /** Whether a run is in progress. */
    get busy(): boolean {
        return this.running !== undefined;
    }

    private start(): Promise<void> {
        const run: Promise<void> = this.task()
            .catch((error: unknown) => this.onError(error))
            .finally(() => {
                if (this.running === run) {
                    this.running = undefined;
                }
            });
        this.running = run;
        return run;
    }
}
