import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import pkg from '../../package.json';
import { mapConfigurationAnswer, needsRestart, serverSettings } from '../settings';

/** What VS Code answers for the `torchlint` section with the contributed defaults. */
const defaults = {
    enable: true,
    interpreter: [],
    run: 'onType',
    select: null,
    ignore: [],
    severity: {},
    runtime: { enable: true, timeoutSeconds: 300, steps: null },
    trace: { server: 'off' },
};

describe('settings for the server', () => {
    test('passes the keys the server reads, unchanged, and drops the client-only ones', () => {
        assert.deepEqual(serverSettings(defaults, true), {
            enable: true,
            run: 'onType',
            select: null,
            ignore: [],
            severity: {},
            runtime: { enable: true, timeoutSeconds: 300, steps: null },
        });
    });

    test('user values go through as they are (the server validates them)', () => {
        const raw = {
            ...defaults,
            run: 'onSave',
            select: ['TL1'],
            ignore: ['TL301'],
            severity: { TL101: 'error' },
            runtime: { enable: true, timeoutSeconds: 'soon', steps: 40 },
        };
        const result = serverSettings(raw, true);
        assert.equal(result.run, 'onSave');
        assert.deepEqual(result.select, ['TL1']);
        assert.deepEqual(result.severity, { TL101: 'error' });
        assert.deepEqual(result.runtime, { enable: true, timeoutSeconds: 'soon', steps: 40 });
    });

    test('an untrusted workspace turns the runtime checks off', () => {
        assert.equal(serverSettings(defaults, false).runtime.enable, false);
        assert.equal(serverSettings({}, false).runtime.enable, false);
        assert.equal(serverSettings(null, false).runtime.enable, false);
        assert.equal(serverSettings({ 'runtime.enable': true }, false).runtime.enable, false);
    });

    test('flat runtime keys are read too', () => {
        assert.deepEqual(serverSettings({ 'runtime.steps': 7, 'runtime.enable': false }, true).runtime, {
            enable: false,
            steps: 7,
        });
    });

    test('a whole configuration answer maps only torchlint items', () => {
        const items = [{ section: 'torchlint' }, { section: 'torchlint', scopeUri: 'file:///w' }, { section: 'python' }];
        const answer = [defaults, { ...defaults, enable: false }, { analysis: 1 }];
        const mapped = mapConfigurationAnswer(items, answer, false) as Array<Record<string, unknown>>;
        assert.equal((mapped[0].runtime as { enable: boolean }).enable, false);
        assert.equal(mapped[1].enable, false);
        assert.deepEqual(mapped[2], { analysis: 1 });
        assert.equal('interpreter' in mapped[0], false);
    });

    test('only an interpreter change restarts the server', () => {
        assert.equal(needsRestart((section) => section === 'torchlint.interpreter'), true);
        assert.equal(needsRestart((section) => section === 'torchlint.select'), false);
    });

    test('package.json contributes every setting the issue names, with a description and a default', () => {
        const properties = pkg.contributes.configuration.properties as Record<string, Record<string, unknown>>;
        const expected = [
            'torchlint.enable',
            'torchlint.interpreter',
            'torchlint.run',
            'torchlint.select',
            'torchlint.ignore',
            'torchlint.severity',
            'torchlint.runtime.enable',
            'torchlint.runtime.timeoutSeconds',
            'torchlint.runtime.steps',
            'torchlint.trace.server',
        ];
        assert.deepEqual(Object.keys(properties).sort(), [...expected].sort());
        for (const key of expected) {
            const property = properties[key];
            assert.ok('default' in property, `${key} has a default`);
            assert.ok(property.description || property.markdownDescription, `${key} has a description`);
        }
        // The contributed defaults are what `defaults` above assumes.
        const fromPackage: Record<string, unknown> = {};
        for (const key of expected) {
            fromPackage[key] = properties[key].default;
        }
        assert.deepEqual(fromPackage, {
            'torchlint.enable': defaults.enable,
            'torchlint.interpreter': defaults.interpreter,
            'torchlint.run': defaults.run,
            'torchlint.select': defaults.select,
            'torchlint.ignore': defaults.ignore,
            'torchlint.severity': defaults.severity,
            'torchlint.runtime.enable': defaults.runtime.enable,
            'torchlint.runtime.timeoutSeconds': defaults.runtime.timeoutSeconds,
            'torchlint.runtime.steps': defaults.runtime.steps,
            'torchlint.trace.server': defaults.trace.server,
        });
    });

    test('the interpreter is a restricted setting in untrusted workspaces', () => {
        const trust = pkg.capabilities.untrustedWorkspaces;
        assert.equal(trust.supported, 'limited');
        assert.deepEqual(trust.restrictedConfigurations, ['torchlint.interpreter']);
    });
});
