// The end-to-end test's phases after the first one (run.mjs has `basics` and `latency`): each
// takes the context run.mjs builds ({page, workspace, dirs, extension, python, checkpoint,
// screenshot, readme, results}) and fails with a message that says what the editor did not show.

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {
    activeEditor,
    chooseAction,
    closeAllEditors,
    fail,
    goToLine,
    log,
    openFile,
    retry,
    sleep,
    SQUIGGLES,
    textOf,
    until,
    visible,
} from './lib.mjs';

const LENS = '.codelens-decoration a';

/** The text of the Problems panel's rows (opened once, kept open). */
async function problems(page) {
    const panel = page.locator('.markers-panel');
    if (!(await panel.isVisible())) {
        await retry(
            'opening the Problems panel',
            3,
            async () => {
                await page.keyboard.press('Control+Shift+M');
                await visible(panel, 'the Problems panel', 5_000);
            },
            () => sleep(500),
        );
    }
    return (await page.locator('.markers-panel .monaco-list-row').allInnerTexts()).map((t) => t.replace(/\s+/g, ' '));
}

async function rowsWith(page, pattern) {
    return (await problems(page)).filter((row) => pattern.test(row));
}

/** Focuses the editor and puts the cursor on `line` (1-based), at its first character. */
async function cursorOn(page, line) {
    await goToLine(page, line);
    await page.keyboard.press('Home');
}

async function squiggleCount(page) {
    return activeEditor(page).locator(SQUIGGLES).count();
}

async function lensTitles(page, scope) {
    return (await (scope ?? activeEditor(page)).locator(LENS).allInnerTexts()).map((t) => t.trim());
}

/** Opens the Quick Fix menu on `line` (1-based), column of `token`, and returns its rows. */
async function quickFixMenu(page, line, token) {
    const rows = page.locator('.action-widget .monaco-list-row');
    await retry(
        `the Quick Fix menu on line ${line}`,
        3,
        async () => {
            const target = activeEditor(page).locator('.view-line').filter({ hasText: token }).getByText(token, { exact: false });
            await (await visible(target, `"${token}" in the editor`, 10_000)).click();
            await page.keyboard.press('Control+.');
            await visible(rows, 'the Quick Fix menu', 10_000);
        },
        async () => {
            await page.keyboard.press('Escape');
            await sleep(500);
        },
    );
    return (await rows.allInnerTexts()).map((t) => t.replace(/\s+/g, ' ').trim());
}

async function toastsText(page) {
    return (await page.locator('.notification-toast').allInnerTexts()).join('\n').replace(/\s+/g, ' ');
}

async function clearToasts(page) {
    for (const button of await page.locator('.notification-toast .codicon-notifications-clear').all()) {
        await button.click({ timeout: 2_000 }).catch(() => {});
    }
}

/** Waits for a runtime check's verdict notification (`pattern`) after clicking `lens`. */
async function runLens(page, title, verdict) {
    const lens = activeEditor(page).locator(LENS).filter({ hasText: title });
    await visible(lens, `the "${title}" code lens`, 60_000);
    await clearToasts(page);
    await lens.first().click();
    log(`clicked "${title}"`);
    await until(`no verdict notification after "${title}"`, 150_000, async () => verdict.test(await toastsText(page)));
    return toastsText(page);
}

function writeJson(file, value) {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, JSON.stringify(value, null, 4));
}

// --- findings through syntax errors ----------------------------------------------------------

export async function syntax(ctx) {
    const { page } = ctx;
    await openFile(page, 'typing_demo.py');
    await visible(activeEditor(page).locator(SQUIGGLES), 'the TL204 squiggle of typing_demo.py', 60_000);
    await visible(activeEditor(page).locator(LENS), 'the code lenses of typing_demo.py', 60_000);
    const lensesBefore = await lensTitles(page);
    const before = await rowsWith(page, /typing_demo|TL204/);
    log(`typing_demo.py: lenses ${lensesBefore.join(' | ')}; problems ${before.length}`);
    // A half-typed line inside the training loop, after `optimizer.step()`.
    const step = fs.readFileSync(path.join(ctx.workspace, 'typing_demo.py'), 'utf8').split('\n').indexOf('            optimizer.step()') + 1;
    await cursorOn(page, step);
    await page.keyboard.press('End');
    await page.keyboard.press('Enter');
    await page.keyboard.type('if loss > ', { delay: 30 });
    await until('no TL001 row in the Problems panel for the half-typed line', 20_000, async () => (await rowsWith(page, /TL001/)).length === 1);
    const [syntaxRow] = await rowsWith(page, /TL001/);
    log(`Problems panel: ${syntaxRow}`);
    if (!/rest of the file is checked/.test(syntaxRow)) fail(`the TL001 row does not say the rest is checked: ${syntaxRow}`);
    if ((await rowsWith(page, /TL204/)).length < 1) fail('the TL204 finding of the other block went away while the loop did not parse');
    await sleep(1500); // the lenses would be asked for again meanwhile
    const lensesDuring = await lensTitles(page);
    if (lensesDuring.join('|') !== lensesBefore.join('|')) {
        fail(`the code lenses changed while a line was half typed: ${lensesBefore.join('|')} -> ${lensesDuring.join('|')}`);
    }
    await ctx.readme('syntax-error');
    await checkpoint(ctx, 'syntax-error');
    // Undo the line (undo goes a word at a time): TL001 goes, TL204 stays.
    await until('TL001 stayed after the line was undone', 30_000, async () => {
        if ((await rowsWith(page, /TL001/)).length === 0) return true;
        await page.keyboard.press('Control+Z');
        await sleep(400);
        return false;
    });
    if ((await rowsWith(page, /TL204/)).length !== 1) fail('TL204 went away after the line was undone');
    log('a half-typed line: TL001 on it, the other block still checked, the lenses in place');
    await page.keyboard.press('Control+S');
}

async function checkpoint(ctx, name) {
    await ctx.checkpoint(name);
}

// --- notebooks -------------------------------------------------------------------------------

export async function notebook(ctx) {
    const { page } = ctx;
    const row = page.locator('.explorer-folders-view .monaco-list-row').filter({ hasText: 'notebook.ipynb' });
    await visible(row, 'the Explorer row of notebook.ipynb', 30_000);
    // The notebook's cells (Playwright takes the notebook's own overlay element for hidden).
    const editor = page.locator('.notebookOverlay');
    // Opened before VS Code's notebook support is up, the file shows as JSON text: close it and
    // open it again.
    await retry(
        'opening notebook.ipynb as a notebook',
        4,
        async () => {
            await row.first().click();
            await until('notebook.ipynb did not open as a notebook', 10_000, async () => (await editor.locator('.cell-list-container').count()) > 0);
        },
        async () => {
            await page.locator('.tabs-container .tab.active .codicon-close').first().click().catch(() => {});
            await sleep(2000);
        },
    );
    const squiggles = editor.locator(SQUIGGLES);
    await visible(squiggles, 'a squiggle in a notebook cell', 60_000);
    await until('the two findings of the notebook did not show', 30_000, async () => (await squiggles.count()) >= 2);
    const rows = await rowsWith(page, /notebook\.ipynb|TL101|TL204/);
    log(`notebook problems: ${rows.join(' || ')}`);
    if (!rows.some((r) => /TL101/.test(r))) fail('no TL101 row for the loop cell of the notebook');
    // The lenses of the loop's cell.
    const lenses = editor.locator(LENS).filter({ hasText: 'Overfit one batch' });
    await visible(lenses, 'the "Overfit one batch" lens in the notebook cell', 30_000);
    // Hover and Quick Fix on the deprecated GradScaler of the first cell.
    const token = editor.locator('.view-line').filter({ hasText: 'GradScaler' }).getByText('GradScaler', { exact: false });
    await (await visible(token, 'GradScaler in the first cell', 10_000)).hover();
    const hover = page.locator('.monaco-hover').filter({ hasText: 'TL204' });
    await visible(hover, 'the TL204 hover in the notebook cell', 15_000);
    log(`notebook hover: ${(await textOf(hover.first())).split('\n')[0]}`);
    await page.mouse.move(5, 5);
    await token.first().click();
    await page.keyboard.press('Control+.');
    const menu = page.locator('.action-widget .monaco-list-row');
    await visible(menu.filter({ hasText: 'TL204:' }), 'the TL204 fix in the notebook cell', 15_000);
    const offered = (await menu.allInnerTexts()).map((t) => t.trim());
    log(`notebook Quick Fix: ${offered.join(' | ')}`);
    if (!offered.some((t) => /Ignore TL204 on this line/.test(t))) fail('no noqa action in the notebook cell');
    await ctx.readme('notebook');
    await page.keyboard.press('Escape');
    await checkpoint(ctx, 'notebook');
    log('notebook: squiggles, lenses, hover, quick fixes and noqa in cells');
}

// --- runtime findings --------------------------------------------------------------------------

export async function runtime(ctx) {
    const { page } = ctx;
    await openFile(page, 'confirm.py');
    await until('no TL102 row for confirm.py', 60_000, async () => (await rowsWith(page, /TL102/)).length === 1);
    const grads = await runLens(page, 'Gradient scan', /grads (problems|healthy)|grads:/i);
    log(`gradient scan: ${grads}`);
    const overfit = await runLens(page, 'Overfit one batch', /overfit (pass|fail|nan)|overfit:/i);
    log(`overfit: ${overfit}`);
    await until('the runtime findings did not reach the Problems panel', 30_000, async () =>
        (await rowsWith(page, /confirmed by a run/)).length === 1,
    );
    const all = await problems(page);
    const tl102 = all.filter((r) => /TL102/.test(r));
    // A runtime finding's row names its source (torchlint-runtime); the merged TL102 mentions
    // TLR107 in its message and in its related location, not as a finding of its own.
    const tlr107 = all.filter((r) => /torchlint-runtime\s*\(?TLR107/.test(r));
    log(`after two checks: ${tl102.length} TL102 row(s), ${tlr107.length} TLR107 row(s): ${tl102.join(' || ')}`);
    if (tl102.length !== 1 || tlr107.length !== 0) {
        fail(`two checks should leave one TL102 that says both, and no TLR107 of its own:\n${all.join('\n')}`);
    }
    // The fix, and the check again.
    const backward = fs.readFileSync(path.join(ctx.workspace, 'confirm.py'), 'utf8').split('\n').indexOf('        loss.backward()') + 1;
    await cursorOn(page, backward);
    const offered = await quickFixMenu(page, backward, 'backward');
    log(`Quick Fix: ${offered.join(' | ')}`);
    const again = offered.find((t) => /zero_grad\(\)` before the backward, and run the overfit check again/.test(t));
    if (!again) fail(`no "fix and run again" in the Quick Fix menu: ${offered.join(' | ')}`);
    await checkpoint(ctx, 'runtime-quick-fix');
    await chooseAction(page, 'and run the overfit check again');
    await sleep(300);
    await checkpoint(ctx, 'runtime-fixed');
    await until('the fix was not saved before the check ran', 20_000, () =>
        fs.readFileSync(path.join(ctx.workspace, 'confirm.py'), 'utf8').includes('        optimizer.zero_grad()\n        loss.backward()'),
    );
    await until('no verdict after "fix and run again"', 150_000, async () => /overfit pass/i.test(await toastsText(page)));
    log('fixed and ran again: overfit pass');
    // The report: Run again, and the last runs compared.
    const frame = await reportFrame(page, /The last runs/);
    const history = await frame.evaluate(() => document.body.innerText);
    if (!/Loss of the last \d runs/.test(history)) fail('the report does not overlay the last runs\' loss curves');
    await frame.evaluate(() =>
        [...document.querySelectorAll('h2, h3, figcaption, .chart-title')]
            .find((element) => /Loss of the last/.test(element.textContent ?? ''))
            ?.scrollIntoView(),
    );
    await sleep(500);
    await ctx.readme('report');
    await clearToasts(page);
    await frame.locator('#rerun').click();
    const runsListed = async () => {
        const shown = await reportFrame(page, /The last runs/);
        return shown.evaluate(
            () => ([...document.querySelectorAll('table')].find((t) => /When/.test(t.innerText))?.rows.length ?? 1) - 1,
        );
    };
    await until('"Run again" did not add a run to the report', 150_000, async () => (await runsListed()) >= 3);
    log(`Run again: the report lists ${await runsListed()} runs of overfit, their loss curves overlaid`);
    await checkpoint(ctx, 'runtime');
}

/** The report webview's inner frame whose text matches `pattern`. */
async function reportFrame(page, pattern) {
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
        for (const frame of page.frames()) {
            try {
                const text = await frame.evaluate(() => document.body?.innerText ?? '');
                if (text && pattern.test(text) && (await frame.locator('#rerun').count()) > 0) return frame;
            } catch {
                // a frame that is navigating
            }
        }
        await sleep(500);
    }
    fail(`no report view shows ${pattern}`);
}

// --- settings that fail safe, and fix-all on save ---------------------------------------------

export async function settings(ctx) {
    const { page } = ctx;
    const file = path.join(ctx.workspace, '.vscode', 'settings.json');
    await openFile(page, 'typing_demo.py'); // the server runs once a Python file is open
    await until('typing_demo.py was not linted', 60_000, async () => (await rowsWith(page, /TL204/)).length >= 1);
    await clearToasts(page);
    writeJson(file, { 'torchlint.select': ['TL999'] });
    await until('no warning names the unknown code', 30_000, async () => /TL999/.test(await toastsText(page)));
    await sleep(1500); // any other toast would have come by now
    const shown = (await page.locator('.notification-toast').allInnerTexts()).filter((t) => /TL999/.test(t));
    log(`settings warning: ${shown.map((t) => t.replace(/\s+/g, ' ')).join(' || ')}`);
    if (shown.length !== 1) fail(`the unknown code was shown in ${shown.length} notifications, not one`);
    if (!/torchlint\.select \(the workspace settings\)/.test(shown[0])) fail(`the warning names the wrong place: ${shown[0]}`);
    await until('linting stopped after a typo in torchlint.select', 30_000, async () => (await rowsWith(page, /TL204/)).length >= 1);
    log('a typo in torchlint.select: one warning naming the workspace settings, linting goes on');
    // Fix-all on save.
    writeJson(file, { 'editor.codeActionsOnSave': { 'source.fixAll.torchlint': 'explicit' } });
    await sleep(1000);
    await openFile(page, 'fixall.py');
    await visible(activeEditor(page).locator(SQUIGGLES), 'the TL204 squiggle of fixall.py', 30_000);
    await cursorOn(page, 1);
    await page.keyboard.press('End');
    await page.keyboard.type(' ');
    await page.keyboard.press('Control+S');
    await until('saving did not apply source.fixAll.torchlint', 30_000, () =>
        fs.readFileSync(path.join(ctx.workspace, 'fixall.py'), 'utf8').includes('torch.amp.GradScaler("cuda", enabled=False)'),
    );
    log('saved with source.fixAll.torchlint: the file on disk is fixed');
    fs.rmSync(file);
}

// --- the torchlint bundled with the extension --------------------------------------------------

/**
 * A Python with torch but without torchlint: a virtual environment of the test's interpreter
 * whose only package folder is the one torch is in, added by a `.pth` line (so the editable
 * torchlint of this checkout, which a `.pth` *file* of that folder installs, is not seen).
 */
function torchWithoutTorchlint(ctx) {
    const venv = path.join(ctx.dirs.userData, '..', 'torch-only');
    const run = (file, args) => spawnSync(file, args, { encoding: 'utf8', cwd: ctx.workspace, timeout: 120_000 });
    const site = run(ctx.python, ['-c', 'import os, torch; print(os.path.dirname(os.path.dirname(torch.__file__)))']);
    if (site.status !== 0) fail(`cannot find torch's folder: ${site.stderr}`);
    const made = run(ctx.python, ['-m', 'venv', '--without-pip', venv]);
    if (made.status !== 0) fail(`cannot make a virtual environment: ${made.stderr}`);
    const python = path.join(venv, 'bin', 'python');
    const own = run(python, ['-c', 'import sys; print(next(p for p in sys.path if p.endswith("site-packages")))']);
    fs.writeFileSync(path.join(own.stdout.trim(), 'torch-only.pth'), `${site.stdout.trim()}\n`);
    const check = run(python, ['-c', 'import torch\ntry:\n    import torchlint\nexcept ImportError:\n    print("ok")']);
    if (check.stdout.trim() !== 'ok') fail(`${python} should have torch and no torchlint: ${check.stdout}${check.stderr}`);
    return python;
}

export async function bundled(ctx) {
    const { page, dirs } = ctx;
    const bare = process.env.TORCHLINT_E2E_BARE_PYTHON || 'python3';
    const probe = spawnSync(bare, ['-c', 'import torchlint'], { encoding: 'utf8', cwd: ctx.workspace });
    if (probe.status === 0) fail(`${bare} has torchlint: it cannot show the bundled copy at work`);
    // The workspace's settings (code-server picks up their changes on disk at once).
    writeJson(path.join(ctx.workspace, '.vscode', 'settings.json'), { 'torchlint.interpreter': [bare] });
    log(`torchlint.interpreter: ${bare} (no torchlint installed there)`);
    const clientLog = () => findLog(path.join(dirs.userData, 'logs'), 'torchlint.log');
    await until('the server did not restart with the bundled torchlint', 60_000, () =>
        /using the torchlint bundled with the extension/.test(readLog(clientLog())),
    );
    await until('no "Server run command" for the bundled server', 30_000, () =>
        /Server run command: .*bundled\/tool\/lsp_server\.py .*bundled with the extension/.test(readLog(clientLog())),
    );
    // A finding made while typing proves the bundled server lints.
    await openFile(page, 'typing_demo.py');
    const zeroGrad = fs.readFileSync(path.join(ctx.workspace, 'typing_demo.py'), 'utf8').split('\n').indexOf('            optimizer.zero_grad()') + 1;
    await cursorOn(page, zeroGrad);
    const before = await squiggleCount(page);
    await page.keyboard.type('# ');
    await until('the bundled server published no new finding', 30_000, async () => (await rowsWith(page, /TL102/)).length === 1);
    log(`bundled: ${before} squiggle(s) before, TL102 after commenting out zero_grad()`);
    await page.keyboard.press('Control+Z');
    await closeAllEditors(page);
    // The runtime checks with the bundled torchlint run the script in the user's interpreter,
    // with its torch.
    const torchOnly = torchWithoutTorchlint(ctx);
    const runs = (readLog(clientLog()).match(/Server run command: /g) ?? []).length;
    writeJson(path.join(ctx.workspace, '.vscode', 'settings.json'), { 'torchlint.interpreter': [torchOnly] });
    await until('the server did not restart with the torch-only interpreter', 60_000, () =>
        (readLog(clientLog()).match(/Server run command: .*torch-only.*bundled\/tool\/lsp_server\.py/g) ?? []).length > 0 &&
        (readLog(clientLog()).match(/Server run command: /g) ?? []).length > runs,
    );
    await openFile(page, 'train.py');
    const verdict = await runLens(page, 'Overfit one batch', /overfit (pass|fail|nan)|overfit:/i);
    if (!/overfit pass/i.test(verdict)) fail(`the overfit check with the bundled torchlint did not pass: ${verdict}`);
    log(`bundled torchlint, the user's interpreter and torch: ${verdict.split('overfit pass')[0]}overfit pass`);
    fs.rmSync(path.join(ctx.workspace, '.vscode', 'settings.json'));
}

function findLog(dir, name) {
    if (!fs.existsSync(dir)) return null;
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
        const file = path.join(dir, entry.name);
        if (entry.isDirectory()) {
            const found = findLog(file, name);
            if (found) return found;
        } else if (entry.name === name) {
            return file;
        }
    }
    return null;
}

function readLog(file) {
    return file ? fs.readFileSync(file, 'utf8') : '';
}

