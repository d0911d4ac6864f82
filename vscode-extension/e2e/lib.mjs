// Helpers shared by the end-to-end test's phases (run.mjs and the phase modules): waiting for
// the UI, retrying its known races, logging with the time since the start.

import fs from 'node:fs';

export class Prerequisite extends Error {}
export class Failure extends Error {}

export function fail(message) {
    throw new Failure(message);
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const clock = { started: Date.now(), quiet: false };

/** Silences `log` (a scenario cut off by the time limit may still be unwinding), or not. */
export function setQuiet(quiet) {
    clock.quiet = quiet;
}

export function log(message) {
    if (clock.quiet) return;
    const elapsed = ((Date.now() - clock.started) / 1000).toFixed(1).padStart(6);
    console.log(`[e2e ${elapsed} s] ${message}`);
}

export function tail(file, lines = 40) {
    try {
        return fs.readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
    } catch {
        return '(no output)';
    }
}

/** Waits until `locator` is visible; a failure names `what` and the time waited. */
export async function visible(locator, what, timeout) {
    try {
        await locator.first().waitFor({ state: 'visible', timeout });
    } catch {
        fail(`${what} did not appear within ${timeout / 1000} s`);
    }
    return locator.first();
}

/** Runs `attempt` up to `times` times (for the UI's known races), with `reset` in between. */
export async function retry(what, times, attempt, reset = async () => {}) {
    let last;
    for (let i = 1; i <= times; i += 1) {
        try {
            return await attempt(i);
        } catch (error) {
            last = error;
            log(`${what}: attempt ${i}/${times} failed: ${error.message.split('\n')[0]}`);
            if (i < times) await reset();
        }
    }
    throw last;
}

/** Waits (up to 3 s) until `locator` stops moving: a notification slides in. */
export async function settled(locator) {
    let last = null;
    for (let i = 0; i < 15; i += 1) {
        const box = JSON.stringify(await locator.boundingBox());
        if (box === last) return;
        last = box;
        await sleep(200);
    }
}

/** Polls `predicate` every 250 ms until it is true (or throws the `what` failure). */
export async function until(what, timeout, predicate) {
    const deadline = Date.now() + timeout;
    for (;;) {
        if (await predicate()) return;
        if (Date.now() > deadline) fail(`${what} (waited ${timeout / 1000} s)`);
        await sleep(250);
    }
}

export const textOf = async (locator) => (await locator.allInnerTexts()).join('\n').replace(/\u00a0/g, ' ');

/** The squiggles of the editor (any severity). */
export const SQUIGGLES = '.squiggly-error, .squiggly-warning, .squiggly-info';

/** Opens `name` (a file at the workspace's top) from the Explorer; Ctrl+P stays with the
 * headless browser. Waits until the editor shows `expect` (a piece of its text). */
export async function openFile(page, name, expect) {
    const row = page.locator('.explorer-folders-view .monaco-list-row').filter({ hasText: name });
    await visible(row, `the Explorer row of ${name}`, 60_000);
    await retry(
        `opening ${name}`,
        3,
        async () => {
            await row.first().click();
            await visible(page.locator('.tabs-container .tab.active').filter({ hasText: name }), `the editor tab of ${name}`, 10_000);
            if (expect) {
                await visible(activeEditor(page).locator('.view-lines').filter({ hasText: expect }), `the text of ${name}`, 10_000);
            }
        },
        () => sleep(1000),
    );
}

/** The visible text editor (the active editor group's). */
export function activeEditor(page) {
    return page.locator('.editor-group-container.active .editor-instance').first();
}

/** Puts the cursor on `line` (1-based) with the quick-open's `:line` (F1, the command palette,
 * works in the headless browser where Ctrl+G does not). */
export async function goToLine(page, line) {
    await retry(
        `going to line ${line}`,
        3,
        async () => {
            await page.keyboard.press('F1');
            const input = page.locator('.quick-input-widget input');
            await visible(input, 'the command palette', 5_000);
            await input.fill(`:${line}`);
            await sleep(150);
            await page.keyboard.press('Enter');
            await until(`the cursor did not reach line ${line}`, 5_000, async () => {
                const status = await textOf(page.locator('.statusbar-item').filter({ hasText: /Ln \d+/ }));
                return new RegExp(`Ln ${line},`).test(status);
            });
        },
        async () => {
            await page.keyboard.press('Escape');
            await sleep(300);
        },
    );
}

/** Runs a command of the command palette by its title (F1, as Ctrl+Shift+P stays with the browser). */
export async function runCommand(page, title) {
    await retry(
        `the command "${title}"`,
        3,
        async () => {
            await page.keyboard.press('F1');
            const input = page.locator('.quick-input-widget input');
            await visible(input, 'the command palette', 5_000);
            await input.fill(`>${title}`);
            const row = page.locator('.quick-input-widget .monaco-list-row').filter({ hasText: title });
            await visible(row, `"${title}" in the command palette`, 5_000);
            await page.keyboard.press('Enter');
        },
        async () => {
            await page.keyboard.press('Escape');
            await sleep(300);
        },
    );
}

/** Saves and closes every editor (no "save?" dialog can stop the next phase). */
export async function closeAllEditors(page) {
    await runCommand(page, 'File: Save All Files');
    await sleep(300);
    await runCommand(page, 'View: Close All Editors');
    await sleep(500);
}

/** Focuses the Quick Fix menu's row that contains `title` and applies it. */
export async function chooseAction(page, title) {
    const rows = page.locator('.action-widget .monaco-list-row');
    const count = await rows.count();
    for (let i = 0; i <= count; i += 1) {
        const focused = page.locator('.action-widget .monaco-list-row.focused');
        if ((await focused.count()) > 0 && (await textOf(focused.first())).includes(title)) {
            await page.keyboard.press('Enter');
            return;
        }
        await page.keyboard.press('ArrowDown');
    }
    fail(`could not focus the action "${title}" in the Quick Fix menu`);
}
