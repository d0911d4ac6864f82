/**
 * The Python extension (ms-python.python), used only when it is installed: no hard dependency,
 * no npm package for its API. Its API is read by duck typing, newest shape first
 * (`environments`), then the older `settings.getExecutionDetails`.
 */

import * as vscode from 'vscode';
import { Logger } from './log';

export const PYTHON_EXTENSION_ID = 'ms-python.python';

/** How long activating the Python extension may take before torchlint stops waiting for it. */
const ACTIVATION_TIMEOUT_MS = 20_000;

interface EnvironmentPath {
    id?: string;
    path: string;
}

interface PythonApi {
    ready?: Promise<void>;
    environments?: {
        getActiveEnvironmentPath(resource?: vscode.Uri): EnvironmentPath;
        resolveEnvironment(
            environment: EnvironmentPath | string,
        ): Promise<{ executable?: { uri?: vscode.Uri } } | undefined>;
        onDidChangeActiveEnvironmentPath?: vscode.Event<unknown>;
    };
    settings?: {
        getExecutionDetails?(resource?: vscode.Uri): { execCommand?: string[] };
    };
}

function withTimeout<T>(promise: Thenable<T>, ms: number): Promise<T | undefined> {
    return new Promise((resolve, reject) => {
        const timer = setTimeout(() => resolve(undefined), ms);
        promise.then(
            (value) => {
                clearTimeout(timer);
                resolve(value);
            },
            (error: unknown) => {
                clearTimeout(timer);
                reject(error instanceof Error ? error : new Error(String(error)));
            },
        );
    });
}

async function pythonApi(log: Logger): Promise<PythonApi | undefined> {
    const extension = vscode.extensions.getExtension<PythonApi>(PYTHON_EXTENSION_ID);
    if (!extension) {
        return undefined;
    }
    try {
        const api = extension.isActive
            ? extension.exports
            : await withTimeout(extension.activate(), ACTIVATION_TIMEOUT_MS);
        if (!api) {
            log.warn(`The Python extension did not activate within ${ACTIVATION_TIMEOUT_MS / 1000} s; not using it.`);
            return undefined;
        }
        if (api.ready) {
            await withTimeout(api.ready, ACTIVATION_TIMEOUT_MS);
        }
        return api;
    } catch (error) {
        log.warn(`The Python extension failed to activate (${String(error)}); not using it.`);
        return undefined;
    }
}

/**
 * The Python extension's active interpreter for `resource` as a command (executable first), or
 * undefined when the extension is not installed or has no interpreter selected.
 */
export async function activeInterpreter(resource: vscode.Uri | undefined, log: Logger): Promise<string[] | undefined> {
    const api = await pythonApi(log);
    if (!api) {
        return undefined;
    }
    try {
        if (api.environments) {
            const active = api.environments.getActiveEnvironmentPath(resource);
            const environment = await api.environments.resolveEnvironment(active);
            const executable = environment?.executable?.uri?.fsPath;
            if (executable) {
                return [executable];
            }
            log.warn(`The Python extension's active environment (${active.path}) could not be resolved.`);
            return undefined;
        }
        const command = api.settings?.getExecutionDetails?.(resource)?.execCommand;
        return command && command.length > 0 ? command : undefined;
    } catch (error) {
        log.warn(`Could not read the Python extension's active environment: ${String(error)}`);
        return undefined;
    }
}

/** Calls `listener` when the Python extension's active environment changes (when it is installed). */
export async function onActiveEnvironmentChanged(
    listener: () => void,
    log: Logger,
): Promise<vscode.Disposable | undefined> {
    const api = await pythonApi(log);
    const event = api?.environments?.onDidChangeActiveEnvironmentPath;
    return event ? event(() => listener()) : undefined;
}
