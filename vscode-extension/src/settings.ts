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
    extendSelect?: unknown;
    ignore?: unknown;
    severity?: unknown;
    exclude?: unknown;
    configuration?: unknown;
    showSyntaxErrors?: unknown;
    showNotifications?: unknown;
    runtime: RuntimeSettings;
    /** `torchlint.lint.args`: `torchlint check` options, applied by the server after the rest. */
    lint?: { args: unknown };
    /** Where each key's value was set (`user settings`, ...), so the server's messages say. */
    origins?: Record<string, string>;
}

/** The top-level keys the server reads; everything else (interpreter, importStrategy, trace) is the client's. */
export const SERVER_KEYS = [
    'enable',
    'run',
    'select',
    'extendSelect',
    'ignore',
    'severity',
    'exclude',
    'configuration',
    'showSyntaxErrors',
    'showNotifications',
] as const;
const RUNTIME_KEYS = ['enable', 'timeoutSeconds', 'steps'] as const;

function isRecord(value: unknown): value is Record<string, unknown> {
    return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The server's view of one answer to `workspace/configuration` for the `torchlint` section:
 * `raw` is what VS Code has (`{enable, run, ..., runtime: {enable, ...}, lint: {args}, interpreter,
 * trace}`; flat `"runtime.enable"` and `"lint.args"` keys are accepted too).
 */
export function serverSettings(
    raw: unknown,
    trusted: boolean,
    options: { origins?: Record<string, string>; expand?: (path: string) => string } = {},
): ServerSettings {
    const source = isRecord(raw) ? raw : {};
    const result: ServerSettings = { runtime: {} };
    for (const key of SERVER_KEYS) {
        if (source[key] !== undefined) {
            result[key] = source[key];
        }
    }
    if (typeof result.configuration === 'string' && options.expand) {
        result.configuration = result.configuration.trim() === '' ? null : options.expand(result.configuration);
    }
    if (options.origins && Object.keys(options.origins).length > 0) {
        result.origins = options.origins;
    }
    const nested = isRecord(source.runtime) ? source.runtime : {};
    for (const key of RUNTIME_KEYS) {
        const value = source[`runtime.${key}`] !== undefined ? source[`runtime.${key}`] : nested[key];
        if (value !== undefined) {
            result.runtime[key] = value;
        }
    }
    const lint = isRecord(source.lint) ? source.lint : {};
    const args = source['lint.args'] !== undefined ? source['lint.args'] : lint.args;
    if (args !== undefined) {
        result.lint = { args };
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
    items: ReadonlyArray<{ section?: string; scopeUri?: string }>,
    answer: unknown[],
    trusted: boolean,
    describe: (scopeUri: string | undefined) => {
        origins?: Record<string, string>;
        expand?: (path: string) => string;
    } = () => ({}),
): unknown[] {
    return answer.map((value, index) => {
        const item = items[index];
        return item?.section === SECTION ? serverSettings(value, trusted, describe(item.scopeUri)) : value;
    });
}

/** The values of one setting in each scope (what `WorkspaceConfiguration.inspect` gives). */
export interface Inspected {
    globalValue?: unknown;
    workspaceValue?: unknown;
    workspaceFolderValue?: unknown;
}

/**
 * Where the value that applies was set: the most specific scope that has one (`undefined`: the
 * default). `folder` names the workspace folder for its own settings; with `singleFolder` (a
 * folder opened on its own, no .code-workspace file) its settings are called the workspace's, as
 * VS Code's Settings editor calls them.
 */
export function originOf(
    inspected: Inspected | undefined,
    folder?: string,
    singleFolder = false,
): string | undefined {
    if (!inspected) {
        return undefined;
    }
    if (inspected.workspaceFolderValue !== undefined && !singleFolder) {
        return folder ? `the folder settings of ${folder}` : 'the folder settings';
    }
    if (inspected.workspaceFolderValue !== undefined) {
        return 'the workspace settings'; // a folder opened alone: its settings are the workspace's
    }
    if (inspected.workspaceValue !== undefined) {
        return 'the workspace settings';
    }
    if (inspected.globalValue !== undefined) {
        return 'the user settings';
    }
    return undefined;
}

/** Setting changes that need a new server process (the others reach it by `didChangeConfiguration`). */
export const RESTART_SETTINGS = [`${SECTION}.interpreter`, `${SECTION}.importStrategy`];

/** How the server's torchlint is found (the Python tool extensions' `importStrategy`). */
export type ImportStrategy = 'fromEnvironment' | 'useBundled';

export function importStrategy(value: unknown): ImportStrategy {
    return value === 'useBundled' ? 'useBundled' : 'fromEnvironment';
}

/** Whether a configuration change (VS Code's `affectsConfiguration`) needs a restart. */
export function needsRestart(affects: (section: string) => boolean): boolean {
    return RESTART_SETTINGS.some((section) => affects(section));
}
