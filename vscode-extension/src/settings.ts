/**
 * The `torchlint` settings as the language server reads them.
 *
 * The server pulls its settings with `workspace/configuration` (section `torchlint`, once per
 * workspace folder and once without a scope) and validates them itself (`torchlint/lsp/settings.py`).
 * The client answers with VS Code's settings, passed through `serverSettings`: only the keys the
 * server reads, values unchanged (the server reports bad ones), and `runtime.enable` forced to
 * false in an untrusted workspace, so a code lens there cannot run the workspace's code.
 */

export const SECTION = 'torchlint';

export interface RuntimeSettings {
    enable?: unknown;
    timeoutSeconds?: unknown;
    steps?: unknown;
}

export interface ServerSettings {
    enable?: unknown;
    run?: unknown;
    select?: unknown;
    ignore?: unknown;
    severity?: unknown;
    runtime: RuntimeSettings;
}

/** The top-level keys the server reads; everything else (interpreter, trace) is the client's. */
const SERVER_KEYS = ['enable', 'run', 'select', 'ignore', 'severity'] as const;
const RUNTIME_KEYS = ['enable', 'timeoutSeconds', 'steps'] as const;

function isRecord(value: unknown): value is Record<string, unknown> {
    return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The server's view of one answer to `workspace/configuration` for the `torchlint` section:
 * `raw` is what VS Code has (`{enable, run, ..., runtime: {enable, ...}, interpreter, trace}`;
 * flat `"runtime.enable"` keys are accepted too).
 */
export function serverSettings(raw: unknown, trusted: boolean): ServerSettings {
    const source = isRecord(raw) ? raw : {};
    const result: ServerSettings = { runtime: {} };
    for (const key of SERVER_KEYS) {
        if (source[key] !== undefined) {
            result[key] = source[key];
        }
    }
    const nested = isRecord(source.runtime) ? source.runtime : {};
    for (const key of RUNTIME_KEYS) {
        const value = source[`runtime.${key}`] !== undefined ? source[`runtime.${key}`] : nested[key];
        if (value !== undefined) {
            result.runtime[key] = value;
        }
    }
    if (!trusted) {
        result.runtime.enable = false;
    }
    return result;
}

/**
 * Maps a whole `workspace/configuration` answer: items of the `torchlint` section go through
 * `serverSettings`, other sections (the server asks for none today) pass unchanged.
 */
export function mapConfigurationAnswer(
    items: ReadonlyArray<{ section?: string }>,
    answer: unknown[],
    trusted: boolean,
): unknown[] {
    return answer.map((value, index) =>
        items[index]?.section === SECTION ? serverSettings(value, trusted) : value,
    );
}

/** Setting changes that need a new server process (the others reach it by `didChangeConfiguration`). */
export const RESTART_SETTINGS = [`${SECTION}.interpreter`];

/** Whether a configuration change (VS Code's `affectsConfiguration`) needs a restart. */
export function needsRestart(affects: (section: string) => boolean): boolean {
    return RESTART_SETTINGS.some((section) => affects(section));
}
