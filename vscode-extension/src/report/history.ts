/**
 * The last few runs of each script, kept so a report can compare before and after a fix: one
 * entry per run (check, when, verdict, summary and its loss curve), newest first, at most
 * `HISTORY_LENGTH` per script and check. `History` keeps them in the extension's workspace state,
 * so they survive a reload of the window; this module does not import `vscode` (the store is
 * passed in), so it runs under plain `node --test`.
 */

export const HISTORY_LENGTH = 5;

export interface RunRecord {
    check: string;
    script: string;
    /** When the run ended (ms since the epoch). */
    at: number;
    verdict: string | null;
    status: string;
    summary: string;
    /** The loss per step (overfit, gradient scan) or per epoch (fit); empty for the others. */
    losses: Array<number | null>;
}

export interface Store {
    get<T>(key: string): T | undefined;
    update(key: string, value: unknown): Thenable<void> | Promise<void>;
}

const KEY = 'torchlint.runHistory';

function lossesOf(check: string, payload: Record<string, unknown>): Array<number | null> {
    const key = { overfit: 'loss_curve', grads: 'losses', fit: 'train_loss' }[check];
    const values = key ? payload[key] : undefined;
    if (!Array.isArray(values)) {
        return [];
    }
    return values.map((value) => (typeof value === 'number' && Number.isFinite(value) ? value : null));
}

/** The record of an envelope, or undefined for one that names no script or check. */
export function recordOf(envelope: Record<string, unknown>, at: number): RunRecord | undefined {
    const check = typeof envelope.check === 'string' ? envelope.check : undefined;
    const script = typeof envelope.script === 'string' ? envelope.script : undefined;
    if (!check || !script) {
        return undefined;
    }
    const payload = typeof envelope.payload === 'object' && envelope.payload !== null ? envelope.payload : {};
    return {
        check,
        script,
        at,
        verdict: typeof envelope.verdict === 'string' ? envelope.verdict : null,
        status: typeof envelope.status === 'string' ? envelope.status : 'unknown',
        summary: typeof envelope.summary === 'string' ? envelope.summary : '',
        losses: lossesOf(check, payload as Record<string, unknown>),
    };
}

/** `records` with `record` added: newest first, `HISTORY_LENGTH` per script and check. */
export function withRecord(records: RunRecord[], record: RunRecord): RunRecord[] {
    const result = [record, ...records.filter((r) => r.at !== record.at || r.script !== record.script)];
    const counts = new Map<string, number>();
    return result.filter((r) => {
        const key = `${r.script}\0${r.check}`;
        const seen = (counts.get(key) ?? 0) + 1;
        counts.set(key, seen);
        return seen <= HISTORY_LENGTH;
    });
}

export class History {
    constructor(private readonly store: Store) {}

    all(): RunRecord[] {
        const value = this.store.get<unknown>(KEY);
        return Array.isArray(value) ? (value as RunRecord[]) : [];
    }

    /** The runs of one script and check, newest first. */
    of(script: string, check: string): RunRecord[] {
        return this.all().filter((record) => record.script === script && record.check === check);
    }

    async add(record: RunRecord): Promise<void> {
        await this.store.update(KEY, withRecord(this.all(), record));
    }
}
