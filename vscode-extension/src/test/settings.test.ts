import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import pkg from '../../package.json';
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { importStrategy, mapConfigurationAnswer, needsRestart, originOf, serverSettings } from '../settings';

/** What VS Code answers for the `torchlint` section with the contributed defaults. */
const defaults = {
    enable: true,
    interpreter: [],
    importStrategy: 'fromEnvironment',
    run: 'onType',
    select: null,
    extendSelect: [],
    ignore: [],
    severity: {},
    exclude: [],
    configuration: null,
    showSyntaxErrors: true,
    showNotifications: 'onWarning',
    lint: { args: [] },
    runtime: { enable: true, timeoutSeconds: 300, steps: null },
    trace: { server: 'off' },
};

describe('settings for the server', () => {
    test('passes the keys the server reads, unchanged, and drops the client-only ones', () => {
        assert.deepEqual(serverSettings(defaults, true), {
            enable: true,
            run: 'onType',
            select: null,
            extendSelect: [],
            ignore: [],
            severity: {},
            exclude: [],
            configuration: null,
            showSyntaxErrors: true,
            showNotifications: 'onWarning',
            runtime: { enable: true, timeoutSeconds: 300, steps: null },
            lint: { args: [] },
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

    test('lint.args goes through as the server reads it, nested or flat', () => {
        const nested = serverSettings({ ...defaults, lint: { args: ['--no-project', '--select=TL1'] } }, true);
        assert.deepEqual(nested.lint, { args: ['--no-project', '--select=TL1'] });
        const flat = serverSettings({ ...defaults, 'lint.args': ['--ignore', 'TL301'] }, true);
        assert.deepEqual(flat.lint, { args: ['--ignore', 'TL301'] });
        assert.equal(serverSettings({}, true).lint, undefined);
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

    test('only an interpreter or import strategy change restarts the server', () => {
        assert.equal(needsRestart((section) => section === 'torchlint.interpreter'), true);
        assert.equal(needsRestart((section) => section === 'torchlint.importStrategy'), true);
        assert.equal(needsRestart((section) => section === 'torchlint.select'), false);
        assert.equal(importStrategy('useBundled'), 'useBundled');
        assert.equal(importStrategy('sometimes'), 'fromEnvironment');
        assert.equal(importStrategy(undefined), 'fromEnvironment');
    });

    test('the configuration path is expanded, and each value says where it was set', () => {
        const items = [{ section: 'torchlint', scopeUri: 'file:///w' }];
        const answer = [{ ...defaults, configuration: '${workspaceFolder}/ci.toml', select: ['TL999'] }];
        const [mapped] = mapConfigurationAnswer(items, answer, true, (scope) => ({
            origins: (scope === 'file:///w' ? { select: 'the user settings' } : {}) as Record<string, string>,
            expand: (value) => value.replace('${workspaceFolder}', '/w'),
        })) as Array<Record<string, unknown>>;
        assert.equal(mapped.configuration, '/w/ci.toml');
        assert.deepEqual(mapped.origins, { select: 'the user settings' });
        const [blank] = mapConfigurationAnswer(items, [{ configuration: '  ' }], true, () => ({
            expand: (value) => value,
        })) as Array<Record<string, unknown>>;
        assert.equal(blank.configuration, null);
        assert.equal('origins' in blank, false);
    });

    test('the origin of a value is its most specific scope', () => {
        assert.equal(originOf({ globalValue: ['TL1'] }), 'the user settings');
        assert.equal(originOf({ globalValue: 1, workspaceValue: 2 }), 'the workspace settings');
        assert.equal(originOf({ workspaceValue: 2, workspaceFolderValue: 3 }, 'api'), 'the folder settings of api');
        assert.equal(originOf({ workspaceValue: 2, workspaceFolderValue: 2 }, 'api', true), 'the workspace settings');
        assert.equal(originOf({}), undefined);
        assert.equal(originOf(undefined), undefined);
    });

    test('package.json contributes every setting the issue names, with a description and a default', () => {
        const properties = pkg.contributes.configuration.properties as Record<string, Record<string, unknown>>;
        const expected = [
            'torchlint.enable',
            'torchlint.interpreter',
            'torchlint.importStrategy',
            'torchlint.run',
            'torchlint.select',
            'torchlint.extendSelect',
            'torchlint.ignore',
            'torchlint.severity',
            'torchlint.exclude',
            'torchlint.configuration',
            'torchlint.showSyntaxErrors',
            'torchlint.showNotifications',
            'torchlint.lint.args',
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
            'torchlint.importStrategy': defaults.importStrategy,
            'torchlint.run': defaults.run,
            'torchlint.select': defaults.select,
            'torchlint.extendSelect': defaults.extendSelect,
            'torchlint.ignore': defaults.ignore,
            'torchlint.severity': defaults.severity,
            'torchlint.lint.args': defaults.lint.args,
            'torchlint.exclude': defaults.exclude,
            'torchlint.configuration': defaults.configuration,
            'torchlint.showSyntaxErrors': defaults.showSyntaxErrors,
            'torchlint.showNotifications': defaults.showNotifications,
            'torchlint.runtime.enable': defaults.runtime.enable,
            'torchlint.runtime.timeoutSeconds': defaults.runtime.timeoutSeconds,
            'torchlint.runtime.steps': defaults.runtime.steps,
            'torchlint.trace.server': defaults.trace.server,
        });
    });

    test('what chooses the code that runs is restricted in untrusted workspaces', () => {
        const trust = pkg.capabilities.untrustedWorkspaces;
        assert.equal(trust.supported, 'limited');
        assert.deepEqual(trust.restrictedConfigurations, [
            'torchlint.interpreter',
            'torchlint.importStrategy',
            'torchlint.configuration',
        ]);
    });

    test('the manifest is ready for a marketplace', () => {
        const manifest = pkg as unknown as Record<string, unknown>;
        for (const key of ['icon', 'repository', 'license', 'homepage', 'bugs', 'categories', 'keywords']) {
            assert.ok(manifest[key], `package.json has ${key}`);
        }
        assert.ok(existsSync(path.join(__dirname, '..', '..', String(manifest.icon))), 'the icon exists');
        assert.ok(existsSync(path.join(__dirname, '..', '..', 'LICENSE')), 'LICENSE exists');
        assert.ok((manifest.keywords as string[]).length <= 30); // the Marketplace's limit
    });
});
