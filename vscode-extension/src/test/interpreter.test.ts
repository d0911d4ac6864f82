import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
    CHECK_SCRIPT,
    bundledCheckScript,
    bundledServerCommand,
    bundleIn,
    checkInterpreter,
    describeFailure,
    effectiveSetting,
    ExecFn,
    formatCommand,
    Interpreter,
    normalizeCommand,
    resolveInterpreter,
    ResolveInputs,
    serverCommand,
    substituteVariables,
} from '../interpreter';

const base: ResolveInputs = {
    setting: undefined,
    trusted: true,
    platform: 'linux',
    workspaceFolder: '/work/project',
    userHome: '/home/ada',
    env: { VENV: '/opt/venv' },
};

describe('interpreter resolution', () => {
    test('falls back to python3 on PATH (python on Windows)', async () => {
        assert.deepEqual(await resolveInterpreter(base), { command: ['python3'], source: 'path' });
        assert.deepEqual(await resolveInterpreter({ ...base, platform: 'win32' }), {
            command: ['python'],
            source: 'path',
        });
    });

    test('the setting wins over the Python extension', async () => {
        let asked = false;
        const result = await resolveInterpreter({
            ...base,
            setting: { globalValue: ['/usr/bin/python3.11'] },
            pythonExtension: async () => {
                asked = true;
                return ['/ext/python'];
            },
        });
        assert.deepEqual(result, { command: ['/usr/bin/python3.11'], source: 'setting' });
        assert.equal(asked, false, 'the Python extension is not consulted when the setting is set');
    });

    test("the Python extension's environment comes before PATH", async () => {
        const result = await resolveInterpreter({ ...base, pythonExtension: async () => ['/ext/python', '-X', 'utf8'] });
        assert.deepEqual(result, { command: ['/ext/python', '-X', 'utf8'], source: 'python-extension' });
    });

    test('an absent or empty Python extension answer falls through to PATH', async () => {
        assert.equal((await resolveInterpreter({ ...base, pythonExtension: async () => undefined })).source, 'path');
        assert.equal((await resolveInterpreter({ ...base, pythonExtension: async () => [] })).source, 'path');
    });

    test('the most specific scope wins in a trusted workspace', () => {
        const scopes = { globalValue: ['/g'], workspaceValue: ['/w'], workspaceFolderValue: ['/f'] };
        assert.deepEqual(effectiveSetting(scopes, true), ['/f']);
        assert.deepEqual(effectiveSetting({ ...scopes, workspaceFolderValue: [] }, true), ['/w']);
        assert.deepEqual(effectiveSetting({ globalValue: ['/g'], workspaceValue: [] }, true), ['/g']);
    });

    test('an untrusted workspace uses only the user setting, never the Python extension', async () => {
        const scopes = { globalValue: ['/home/ada/py'], workspaceValue: ['./evil/python'] };
        assert.deepEqual(effectiveSetting(scopes, false), ['/home/ada/py']);
        const fromWorkspaceOnly = await resolveInterpreter({
            ...base,
            trusted: false,
            setting: { workspaceValue: ['./evil/python'], workspaceFolderValue: ['./evil/python'] },
            pythonExtension: async () => ['/work/project/.venv/bin/python'],
        });
        assert.deepEqual(fromWorkspaceOnly, { command: ['python3'], source: 'path' });
    });

    test('variables, ~ and relative paths are resolved', async () => {
        assert.equal(substituteVariables('${workspaceFolder}/.venv/bin/python', base), '/work/project/.venv/bin/python');
        assert.equal(substituteVariables('${userHome}/py', base), '/home/ada/py');
        assert.equal(substituteVariables('~/py', base), '/home/ada/py');
        assert.equal(substituteVariables('${env:VENV}/bin/python', base), '/opt/venv/bin/python');
        assert.equal(substituteVariables('${env:MISSING}x', base), 'x');
        const relative = await resolveInterpreter({ ...base, setting: { workspaceValue: ['.venv/bin/python', '-X', 'dev'] } });
        assert.deepEqual(relative.command, ['/work/project/.venv/bin/python', '-X', 'dev']);
        const bare = await resolveInterpreter({ ...base, setting: { globalValue: 'python3.12' } });
        assert.deepEqual(bare.command, ['python3.12'], 'a bare name stays a PATH lookup');
    });

    test('setting values are normalised', () => {
        assert.deepEqual(normalizeCommand(' /usr/bin/python3 '), ['/usr/bin/python3']);
        assert.equal(normalizeCommand([]), undefined);
        assert.equal(normalizeCommand(['']), undefined);
        assert.equal(normalizeCommand(null), undefined);
        assert.equal(normalizeCommand(42), undefined);
        assert.deepEqual(normalizeCommand(['/py', '', '-X', 3]), ['/py', '-X']);
    });

    test('the server command line is <python> -m torchlint lsp', () => {
        assert.deepEqual(serverCommand({ command: ['/py', '-X', 'utf8'], source: 'setting' }), {
            command: '/py',
            args: ['-X', 'utf8', '-m', 'torchlint', 'lsp'],
        });
        assert.equal(formatCommand(['/a b/python', '-m', 'torchlint']), '"/a b/python" -m torchlint');
    });
});

describe('the bundled copy', () => {
    test('is used only when the .vsix carries it', () => {
        const files = new Set(['/ext/bundled/tool/lsp_server.py', '/ext/bundled/libs']);
        const bundle = bundleIn('/ext', (file) => files.has(file));
        assert.deepEqual(bundle, { tool: '/ext/bundled/tool', libs: '/ext/bundled/libs' });
        assert.equal(
            bundleIn('/ext', () => false),
            undefined,
        );
    });

    test('its server runs in the user interpreter, and its check loads the native parser', () => {
        const bundle = { tool: '/ext/bundled/tool', libs: '/ext/bundled/libs' };
        assert.deepEqual(bundledServerCommand({ command: ['/py', '-X', 'utf8'], source: 'setting' }, bundle), {
            command: '/py',
            args: ['-X', 'utf8', '/ext/bundled/tool/lsp_server.py'],
        });
        const script = bundledCheckScript(bundle);
        assert.match(script, /sys\.path\[:0\] = \["\/ext\/bundled\/tool","\/ext\/bundled\/libs"\]/);
        assert.match(script, /import torchlint\.lsp\.server, libcst\.native/);
    });
});

describe('the import check', () => {
    const path3: Interpreter = { command: ['python3'], source: 'path' };

    test('passes and reports the version', async () => {
        let seen: { file: string; args: string[] } | undefined;
        const exec: ExecFn = async (file, args) => {
            seen = { file, args };
            return { stdout: '0.1.0\n', stderr: '' };
        };
        const result = await checkInterpreter({ command: ['/py', '-X', 'dev'], source: 'setting' }, exec, {
            platform: 'linux',
        });
        assert.deepEqual(result, { ok: true, version: '0.1.0' });
        assert.deepEqual(seen, { file: '/py', args: ['-X', 'dev', '-c', CHECK_SCRIPT] });
    });

    test('a missing module names the interpreter, its source and the fix', async () => {
        const exec: ExecFn = async () => {
            throw {
                code: 1,
                message: 'Command failed',
                stderr: 'Traceback (most recent call last):\n  File "<string>", line 1\nModuleNotFoundError: No module named \'torchlint\'\n',
            };
        };
        const result = await checkInterpreter(path3, exec, { platform: 'linux' });
        assert.equal(result.ok, false);
        if (!result.ok) {
            assert.match(result.message, /"python3" \(from python3 on PATH\)/);
            assert.match(result.message, /cannot import torchlint \(ModuleNotFoundError: No module named 'torchlint'\)/);
            assert.match(result.message, /python3 -m pip install torchlint/);
            assert.match(result.message, /"torchlint\.interpreter"/);
        }
    });

    test('a missing executable says it was not found', () => {
        const fromPath = describeFailure(path3, { code: 'ENOENT', message: 'spawn python3 ENOENT' }, 'linux');
        assert.match(fromPath.message, /"python3" \(from python3 on PATH\) was not found/);
        const fromSetting = describeFailure({ command: ['/nope/python'], source: 'setting' }, { code: 'ENOENT' }, 'linux');
        assert.match(fromSetting.message, /"\/nope\/python" \(from the torchlint.interpreter setting\) does not exist/);
        const fromExtension = describeFailure(
            { command: ['/env/python'], source: 'python-extension' },
            { code: 'ENOENT' },
            'linux',
        );
        assert.match(fromExtension.message, /the Python extension's active environment/);
    });

    test('a hang is reported as a timeout', () => {
        const result = describeFailure(path3, { killed: true, signal: 'SIGTERM' }, 'linux', 30_000);
        assert.match(result.message, /did not answer within 30 s/);
    });

    test('runs for real against this machine', { skip: !process.env.TORCHLINT_TEST_PYTHON }, async () => {
        const { execFile } = await import('node:child_process');
        const exec: ExecFn = (file, args, options) =>
            new Promise((resolve, reject) =>
                execFile(file, args, options, (error, stdout, stderr) =>
                    error ? reject(Object.assign(error, { stdout, stderr })) : resolve({ stdout, stderr }),
                ),
            );
        const python = process.env.TORCHLINT_TEST_PYTHON ?? 'python3';
        const result = await checkInterpreter({ command: [python], source: 'setting' }, exec, { platform: process.platform });
        assert.equal(result.ok, true, JSON.stringify(result));
    });
});
