/**
 * Which Python runs the torchlint language server, and whether torchlint can be imported there.
 *
 * Resolution order (first match wins, no fallback to the next step: a wrong choice is reported,
 * never silently replaced):
 *
 * 1. the `torchlint.interpreter` setting (a path, optionally followed by arguments); in an
 *    untrusted workspace only its *user* value counts, never a workspace or folder value;
 * 2. the Python extension's active environment, when that extension is installed (trusted
 *    workspaces only: the environment it picks may live inside the workspace);
 * 3. `python3` on PATH (`python` on Windows).
 *
 * This module does not import `vscode`: the caller reads the settings and the Python extension
 * and passes them in, so the logic runs under plain `node --test`.
 */

import * as path from 'node:path';

export type InterpreterSource = 'setting' | 'python-extension' | 'path';

export interface Interpreter {
    /** The executable followed by its own arguments (never empty). */
    command: string[];
    source: InterpreterSource;
}

/** The values of `torchlint.interpreter` in each scope (what `WorkspaceConfiguration.inspect` gives). */
export interface SettingScopes<T> {
    globalValue?: T;
    workspaceValue?: T;
    workspaceFolderValue?: T;
}

export interface ResolveInputs {
    /** The `torchlint.interpreter` setting in each scope. */
    setting: SettingScopes<unknown> | undefined;
    trusted: boolean;
    /** The Python extension's active interpreter (command), or undefined when it has none. */
    pythonExtension?: () => Promise<string[] | undefined>;
    platform: NodeJS.Platform;
    /** For `${workspaceFolder}` and relative paths. */
    workspaceFolder?: string;
    userHome: string;
    env: Record<string, string | undefined>;
}

/** How each source is named in messages. */
export function describeSource(source: InterpreterSource, platform: NodeJS.Platform): string {
    switch (source) {
        case 'setting':
            return 'the torchlint.interpreter setting';
        case 'python-extension':
            return "the Python extension's active environment";
        case 'path':
            return `${defaultPython(platform)} on PATH`;
    }
}

export function defaultPython(platform: NodeJS.Platform): string {
    return platform === 'win32' ? 'python' : 'python3';
}

/** The setting as a list of non-empty strings (a plain string is one path), or undefined when unset. */
export function normalizeCommand(value: unknown): string[] | undefined {
    let parts: unknown[];
    if (typeof value === 'string') {
        parts = [value];
    } else if (Array.isArray(value)) {
        parts = value;
    } else {
        return undefined;
    }
    const command = parts.filter((part): part is string => typeof part === 'string').map((part) => part.trim());
    if (command.length === 0 || command[0] === '') {
        return undefined;
    }
    return command.filter((part) => part !== '');
}

/**
 * The `torchlint.interpreter` value that applies: the most specific scope when the workspace is
 * trusted, only the user's own (global) value when it is not.
 */
export function effectiveSetting(setting: SettingScopes<unknown> | undefined, trusted: boolean): string[] | undefined {
    if (!setting) {
        return undefined;
    }
    if (!trusted) {
        return normalizeCommand(setting.globalValue);
    }
    return (
        normalizeCommand(setting.workspaceFolderValue) ??
        normalizeCommand(setting.workspaceValue) ??
        normalizeCommand(setting.globalValue)
    );
}

/** Expands `${workspaceFolder}`, `${userHome}`, `${env:NAME}` and a leading `~`. */
export function substituteVariables(
    value: string,
    vars: { workspaceFolder?: string; userHome: string; env: Record<string, string | undefined> },
): string {
    let result = value.replace(/\$\{(workspaceFolder|userHome|env:([^}]+))\}/g, (match, name: string, envName?: string) => {
        if (name === 'workspaceFolder') {
            return vars.workspaceFolder ?? match;
        }
        if (name === 'userHome') {
            return vars.userHome;
        }
        return vars.env[envName ?? ''] ?? '';
    });
    if (result === '~' || result.startsWith('~/') || result.startsWith('~\\')) {
        result = vars.userHome + result.slice(1);
    }
    return result;
}

/**
 * The executable of a command from the setting, made absolute when it is a relative path (it
 * contains a separator) and a workspace folder is known; a bare name stays a PATH lookup.
 */
export function resolveExecutable(executable: string, platform: NodeJS.Platform, workspaceFolder?: string): string {
    const paths = platform === 'win32' ? path.win32 : path.posix;
    const hasSeparator = executable.includes('/') || (platform === 'win32' && executable.includes('\\'));
    if (!hasSeparator || paths.isAbsolute(executable) || !workspaceFolder) {
        return executable;
    }
    return paths.resolve(workspaceFolder, executable);
}

/** Applies the resolution order documented at the top of this module. */
export async function resolveInterpreter(inputs: ResolveInputs): Promise<Interpreter> {
    const configured = effectiveSetting(inputs.setting, inputs.trusted);
    if (configured) {
        const command = configured.map((part) => substituteVariables(part, inputs));
        command[0] = resolveExecutable(command[0], inputs.platform, inputs.workspaceFolder);
        return { command, source: 'setting' };
    }
    if (inputs.trusted && inputs.pythonExtension) {
        const active = normalizeCommand(await inputs.pythonExtension());
        if (active) {
            return { command: active, source: 'python-extension' };
        }
    }
    return { command: [defaultPython(inputs.platform)], source: 'path' };
}

/** The language server's command line for an interpreter. */
export function serverCommand(interpreter: Interpreter): { command: string; args: string[] } {
    const [command, ...args] = interpreter.command;
    return { command, args: [...args, '-m', 'torchlint', 'lsp'] };
}

/** The import check: prints torchlint's version when the interpreter can import it. */
export const CHECK_SCRIPT = 'import torchlint, sys; print(torchlint.__version__)';

/** Where the copy of torchlint the platform-specific .vsix carries lives (scripts/package.py). */
export interface Bundle {
    /** `bundled/tool`: torchlint alone, and the server's start script. */
    tool: string;
    /** `bundled/libs`: its dependencies. */
    libs: string;
}

export function bundleIn(extensionPath: string, exists: (file: string) => boolean): Bundle | undefined {
    const tool = path.join(extensionPath, 'bundled', 'tool');
    const libs = path.join(extensionPath, 'bundled', 'libs');
    return exists(path.join(tool, 'lsp_server.py')) && exists(libs) ? { tool, libs } : undefined;
}

/** The import check of the bundled copy: torchlint, its server and libcst's native parser (the
 * part that exists only for the Python versions the bundle carries). */
export function bundledCheckScript(bundle: Bundle): string {
    const paths = JSON.stringify([bundle.tool, bundle.libs]);
    return `import sys; sys.path[:0] = ${paths}; import torchlint.lsp.server, libcst.native; print(torchlint.__version__)`;
}

/** The language server's command line from the bundle: the interpreter runs its start script. */
export function bundledServerCommand(interpreter: Interpreter, bundle: Bundle): { command: string; args: string[] } {
    const [command, ...args] = interpreter.command;
    return { command, args: [...args, path.join(bundle.tool, 'lsp_server.py')] };
}

/** A command line for logs and messages, quoted where needed. */
export function formatCommand(parts: string[]): string {
    return parts.map((part) => (/^[\w@%+=:,./\\-]+$/.test(part) ? part : JSON.stringify(part))).join(' ');
}

export interface ExecResult {
    stdout: string;
    stderr: string;
}

/** What `child_process.execFile` rejects with (the fields we read). */
export interface ExecError {
    code?: string | number | null;
    killed?: boolean;
    signal?: string | null;
    stdout?: string;
    stderr?: string;
    message?: string;
}

export type ExecFn = (
    file: string,
    args: string[],
    options: { timeout: number; cwd?: string },
) => Promise<ExecResult>;

export type CheckResult = { ok: true; version: string } | { ok: false; message: string; detail: string };

export const CHECK_TIMEOUT_MS = 30_000;

/**
 * Runs `<python> -c "import torchlint ..."`; on failure, a message that names the interpreter
 * tried, where it came from, what went wrong and how to fix it.
 */
export async function checkInterpreter(
    interpreter: Interpreter,
    exec: ExecFn,
    options: { platform: NodeJS.Platform; cwd?: string; timeoutMs?: number; script?: string },
): Promise<CheckResult> {
    const [file, ...args] = interpreter.command;
    const timeout = options.timeoutMs ?? CHECK_TIMEOUT_MS;
    try {
        const { stdout } = await exec(file, [...args, '-c', options.script ?? CHECK_SCRIPT], {
            timeout,
            cwd: options.cwd,
        });
        const version = stdout.trim().split(/\r?\n/).pop() ?? '';
        return { ok: true, version: version || 'unknown version' };
    } catch (error) {
        return { ok: false, ...describeFailure(interpreter, (error ?? {}) as ExecError, options.platform, timeout) };
    }
}

/** The user-facing message (one paragraph) and the log detail of a failed import check. */
export function describeFailure(
    interpreter: Interpreter,
    error: ExecError,
    platform: NodeJS.Platform,
    timeoutMs: number = CHECK_TIMEOUT_MS,
): { message: string; detail: string } {
    const python = formatCommand(interpreter.command);
    const tried = `"${python}" (from ${describeSource(interpreter.source, platform)})`;
    const fix =
        `Install torchlint into that interpreter (${python} -m pip install torchlint), ` +
        'or set "torchlint.interpreter" to a Python that has it.';
    const stderr = (error.stderr ?? '').trim();
    // execFile's message already ends with the output; add it only when it does not.
    const message = error.message ?? '';
    const detail = stderr && !message.includes(stderr) ? [message, stderr].filter(Boolean).join('\n') : message;
    if (error.code === 'ENOENT') {
        const missing =
            interpreter.source === 'path'
                ? `torchlint could not start: ${tried} was not found. Install Python 3 and torchlint, ` +
                  'or set "torchlint.interpreter" to a Python that has torchlint.'
                : `torchlint could not start: the interpreter ${tried} does not exist. ` +
                  'Set "torchlint.interpreter" to a Python that has torchlint.';
        return { message: missing, detail };
    }
    if (error.killed || error.signal === 'SIGTERM') {
        return {
            message: `torchlint could not start: ${tried} did not answer within ${Math.round(timeoutMs / 1000)} s. ${fix}`,
            detail,
        };
    }
    const lastLine = stderr.split(/\r?\n/).filter((line) => line.trim() !== '').pop();
    const reason = lastLine ?? (message || 'unknown error');
    return { message: `torchlint could not start: ${tried} cannot import torchlint (${reason}). ${fix}`, detail };
}
