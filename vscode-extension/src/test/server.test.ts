/**
 * Against the real torchlint language server (opt-in: set TORCHLINT_TEST_PYTHON to a Python that
 * has torchlint and torch, e.g. `TORCHLINT_TEST_PYTHON=../.venv/bin/python npm test`).
 *
 * A plain JSON-RPC client plays VS Code's part the way the extension configures it: the settings
 * answer goes through `mapConfigurationAnswer`, the runtime command is the one a code lens sends,
 * the result goes through the report model, and cancelling the progress stops the check.
 */

import assert from 'node:assert/strict';
import { ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import {
    createProtocolConnection,
    ProtocolConnection,
    StreamMessageReader,
    StreamMessageWriter,
} from 'vscode-languageserver-protocol/node';
import { CHECK_TITLES, buildReport, isCancelled, isEnvelope } from '../report/model';
import { mapConfigurationAnswer } from '../settings';

const python = process.env.TORCHLINT_TEST_PYTHON;
const scripts = path.resolve(process.cwd(), '..', 'tests', 'runtime', 'scripts');
const script = path.join(scripts, 'plain.py');
const skip = !python
    ? 'set TORCHLINT_TEST_PYTHON to run against the real server'
    : !existsSync(script)
      ? `${script} is missing (run from vscode-extension/ in the torchlint repository)`
      : false;

interface Session {
    connection: ProtocolConnection;
    process: ChildProcess;
    progress: Array<{ token: unknown; value: { kind: string; title?: string; cancellable?: boolean } }>;
    messages: string[];
}

async function startServer(trusted: boolean, runtime: Record<string, unknown>): Promise<Session> {
    const child = spawn(python as string, ['-m', 'torchlint', 'lsp'], { cwd: scripts, stdio: ['pipe', 'pipe', 'pipe'] });
    child.stderr?.resume();
    const connection = createProtocolConnection(
        new StreamMessageReader(child.stdout as NodeJS.ReadableStream),
        new StreamMessageWriter(child.stdin as NodeJS.WritableStream),
    );
    const session: Session = { connection, process: child, progress: [], messages: [] };
    const vscodeSettings = {
        enable: true,
        interpreter: [],
        run: 'onType',
        select: null,
        ignore: [],
        severity: {},
        runtime: { enable: true, timeoutSeconds: 120, steps: null, ...runtime },
        trace: { server: 'off' },
    };
    connection.onRequest('workspace/configuration', (params: { items: Array<{ section?: string }> }) =>
        mapConfigurationAnswer(
            params.items,
            params.items.map(() => vscodeSettings),
            trusted,
        ),
    );
    connection.onRequest('window/workDoneProgress/create', () => null);
    connection.onRequest('client/registerCapability', () => null);
    connection.onNotification('$/progress', (params: Session['progress'][number]) => {
        session.progress.push(params);
    });
    connection.onNotification('window/showMessage', (params: { message: string }) => {
        session.messages.push(params.message);
    });
    connection.onNotification('window/logMessage', () => undefined);
    connection.onNotification('textDocument/publishDiagnostics', () => undefined);
    connection.listen();
    const folder = pathToFileURL(scripts).toString();
    await connection.sendRequest('initialize', {
        processId: process.pid,
        rootUri: folder,
        workspaceFolders: [{ uri: folder, name: 'scripts' }],
        capabilities: {
            workspace: { configuration: true, didChangeConfiguration: { dynamicRegistration: true } },
            window: { workDoneProgress: true },
        },
    });
    await connection.sendNotification('initialized', {});
    return session;
}

async function stopServer(session: Session | undefined): Promise<void> {
    if (!session) {
        return;
    }
    try {
        await session.connection.sendRequest('shutdown');
        await session.connection.sendNotification('exit');
    } catch {
        // already gone
    }
    session.connection.dispose();
    session.process.kill();
}

const uri = pathToFileURL(script).toString();

describe('the real language server', { skip }, () => {
    let session: Session | undefined;

    before(async () => {
        session = await startServer(true, { steps: 30 });
    });

    after(async () => {
        await stopServer(session);
    });

    test('the lens command answers an envelope the report renders', async () => {
        assert.ok(session);
        const result = await session.connection.sendRequest('workspace/executeCommand', {
            command: 'torchlint.runtime.overfit',
            arguments: [uri, 14],
        });
        assert.ok(isEnvelope(result), JSON.stringify(result).slice(0, 500));
        assert.equal(result.check, 'overfit');
        assert.equal(result.status, 'completed');
        const model = buildReport(result);
        assert.equal(model.title, `torchlint: ${CHECK_TITLES.overfit} (plain.py)`);
        assert.equal(model.charts.length, 1);
        const begin = session.progress.find((item) => item.value.kind === 'begin');
        assert.ok(begin, 'the server reported progress');
        assert.equal(begin.value.cancellable, true);
        assert.equal(begin.value.title, 'torchlint: overfit one batch');
        assert.ok(session.progress.some((item) => item.value.kind === 'end'));
    });

    test('cancelling the progress stops the check', async () => {
        assert.ok(session);
        session.progress.length = 0;
        const pending = session.connection.sendRequest('workspace/executeCommand', {
            command: 'torchlint.runtime.grads',
            arguments: [uri, 14],
        });
        const started = Date.now();
        while (!session.progress.some((item) => item.value.kind === 'begin') && Date.now() - started < 30_000) {
            await new Promise((resolve) => setTimeout(resolve, 20));
        }
        const begin = session.progress.find((item) => item.value.kind === 'begin');
        assert.ok(begin);
        await session.connection.sendNotification('window/workDoneProgress/cancel', { token: begin.token });
        const result = await pending;
        assert.ok(isEnvelope(result));
        assert.equal(isCancelled(result), true, JSON.stringify(result).slice(0, 300));
    });
});

describe('the real language server, untrusted workspace', { skip }, () => {
    let session: Session | undefined;

    before(async () => {
        session = await startServer(false, {});
    });

    after(async () => {
        await stopServer(session);
    });

    test('runtime checks are refused: the client turned them off', async () => {
        assert.ok(session);
        const result = (await session.connection.sendRequest('workspace/executeCommand', {
            command: 'torchlint.runtime.overfit',
            arguments: [uri, 14],
        })) as Record<string, unknown>;
        assert.equal(isEnvelope(result), false);
        assert.equal(result.status, 'refused');
        assert.equal(result.reason, 'disabled');
    });
});
