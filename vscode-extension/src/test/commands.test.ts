import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import pkg from '../../package.json';
import { COMMANDS, RUNTIME_COMMANDS, runtimeCommandForServer, SERVER_COMMANDS } from '../commands';
import { SerialQueue } from '../serial';

describe('commands', () => {
    test("client command ids never collide with the server's", () => {
        for (const id of Object.values(COMMANDS)) {
            assert.equal(SERVER_COMMANDS.includes(id), false, id);
        }
    });

    test('package.json contributes exactly the client commands, titled for the palette', () => {
        const contributed = pkg.contributes.commands.map((command) => command.command).sort();
        assert.deepEqual(contributed, Object.values(COMMANDS).sort());
        const titles = Object.fromEntries(pkg.contributes.commands.map((command) => [command.command, command.title]));
        assert.equal(titles[COMMANDS.restart], 'Restart Server');
        assert.equal(titles[COMMANDS.showLogs], 'Show Logs');
        assert.equal(titles[COMMANDS.runOverfit], 'Run Overfit One Batch');
        assert.equal(titles[COMMANDS.runGrads], 'Run Gradient Scan');
        assert.equal(titles[COMMANDS.profile], 'Profile Training Step');
        assert.ok(pkg.contributes.commands.every((command) => command.category === 'torchlint'));
    });

    test('the lenses’ server commands map to runtime checks', () => {
        assert.equal(runtimeCommandForServer('torchlint.runtime.overfit')?.client, COMMANDS.runOverfit);
        assert.equal(runtimeCommandForServer('torchlint.runtime.grads')?.client, COMMANDS.runGrads);
        assert.equal(runtimeCommandForServer('torchlint.runtime.profile')?.client, COMMANDS.profile);
        assert.equal(runtimeCommandForServer('torchlint.showDebugInformation'), undefined);
        assert.equal(RUNTIME_COMMANDS.length, 3);
    });

    test('activation is on Python files and Jupyter notebooks, with no hard dependency', () => {
        assert.deepEqual(pkg.activationEvents, ['onLanguage:python', 'onNotebook:jupyter-notebook']);
        assert.equal('extensionDependencies' in pkg, false);
        assert.equal(pkg.main, './dist/extension.js');
    });
});

function deferred(): { promise: Promise<void>; resolve: () => void } {
    let resolve!: () => void;
    const promise = new Promise<void>((r) => (resolve = r));
    return { promise, resolve };
}

describe('serialised restarts', () => {
    test('one at a time, and a burst queues exactly one more run', async () => {
        const gates: Array<{ promise: Promise<void>; resolve: () => void }> = [];
        let active = 0;
        let maxActive = 0;
        let runs = 0;
        const queue = new SerialQueue(async () => {
            runs += 1;
            active += 1;
            maxActive = Math.max(maxActive, active);
            const gate = deferred();
            gates.push(gate);
            await gate.promise;
            active -= 1;
        });
        const first = queue.request();
        const second = queue.request();
        const third = queue.request();
        const fourth = queue.request();
        assert.equal(second, third, 'requests while one is queued join it');
        assert.equal(third, fourth);
        assert.equal(runs, 1);
        gates[0].resolve();
        await first;
        await new Promise((resolve) => setImmediate(resolve));
        assert.equal(runs, 2, 'the queued run starts after the first');
        gates[1].resolve();
        await second;
        assert.equal(runs, 2);
        assert.equal(maxActive, 1, 'never two runs at once');
        assert.equal(queue.busy, false);
    });

    test('a failing run is reported and does not block the next', async () => {
        const errors: unknown[] = [];
        let calls = 0;
        const queue = new SerialQueue(
            async () => {
                calls += 1;
                if (calls === 1) {
                    throw new Error('boom');
                }
            },
            (error) => errors.push(error),
        );
        await queue.request();
        await queue.request();
        assert.equal(calls, 2);
        assert.equal(errors.length, 1);
    });
});
