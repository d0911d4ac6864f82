// Keystroke-to-squiggle latency in the real editor.
//
// For each script of benchmarks/editor_scripts.py (about 300 and 2,000 lines), the test puts the
// cursor before a `zero_grad()` call of a training loop and types `#`: the call is commented out
// and a TL102 ("gradients are never cleared") must appear a few lines below. Backspace brings the
// call back and the finding must go. Both keystrokes leave valid Python.
//
// In the page, a capturing `keydown` listener stamps the keystroke (performance.now(), the
// browser's clock) and a MutationObserver on the editor stamps the first DOM change after it that
// leaves one squiggle more (or fewer) than before: the moment the squiggle is drawn (or gone).
// The keystrokes are spaced out (0.35 to 0.6 s apart), so each is measured alone, as someone
// who types a fix and looks up.

import { activeEditor, fail, goToLine, log, openFile, sleep, SQUIGGLES, textOf, until } from './lib.mjs';

/** Installs the page-side stamps (once per page). */
async function installProbe(page) {
    await page.evaluate((selector) => {
        if (window.__torchlintProbe) return;
        const probe = { armed: false, keyAt: 0, doneAt: 0, base: 0, direction: 0, root: null };
        window.__torchlintProbe = probe;
        const count = () => (probe.root ? probe.root.querySelectorAll(selector).length : 0);
        probe.count = count;
        document.addEventListener(
            'keydown',
            () => {
                if (probe.armed && !probe.keyAt) probe.keyAt = performance.now();
            },
            true,
        );
        probe.observer = new MutationObserver(() => {
            if (!probe.keyAt || probe.doneAt) return;
            const now = count();
            if (probe.direction > 0 ? now > probe.base : now < probe.base) probe.doneAt = performance.now();
        });
        probe.arm = (root, direction) => {
            probe.observer.disconnect();
            probe.root = root;
            probe.base = count();
            probe.direction = direction;
            probe.keyAt = 0;
            probe.doneAt = 0;
            probe.armed = true;
            probe.observer.observe(root, { subtree: true, childList: true, attributes: true, attributeFilter: ['class'] });
            return probe.base;
        };
    }, SQUIGGLES);
}

async function arm(page, direction) {
    return page.evaluate((dir) => {
        const root = document.querySelector('.editor-group-container.active .editor-instance');
        return window.__torchlintProbe.arm(root, dir);
    }, direction);
}

async function measured(page, timeout) {
    const deadline = Date.now() + timeout;
    for (;;) {
        const { keyAt, doneAt } = await page.evaluate(() => ({
            keyAt: window.__torchlintProbe.keyAt,
            doneAt: window.__torchlintProbe.doneAt,
        }));
        if (keyAt && doneAt) return doneAt - keyAt;
        if (Date.now() > deadline) return null;
        await sleep(10);
    }
}

const squiggleCount = (page) => page.evaluate(() => window.__torchlintProbe.count());

/** Waits until the editor's squiggles stop changing (the first diagnostics are in). */
async function steadySquiggles(page, name) {
    await page.evaluate(() => {
        window.__torchlintProbe.root = document.querySelector('.editor-group-container.active .editor-instance');
    });
    let last = -1;
    let since = Date.now();
    await until(`the squiggles of ${name} did not settle`, 60_000, async () => {
        const now = await squiggleCount(page);
        if (now !== last) {
            last = now;
            since = Date.now();
        }
        return now > 0 && Date.now() - since > 1500;
    });
    return last;
}

/** Whether a squiggle is drawn on `line` (1-based): one whose top matches the line number's. */
async function squiggleOnLine(page, line) {
    return activeEditor(page).evaluate(
        (root, { line, selector }) => {
            const number = [...root.querySelectorAll('.margin-view-overlays .line-numbers')].find(
                (element) => element.textContent.trim() === String(line),
            );
            if (!number) return false;
            const top = number.getBoundingClientRect().top;
            return [...root.querySelectorAll(selector)].some((element) => Math.abs(element.getBoundingClientRect().top - top) < 3);
        },
        { line, selector: SQUIGGLES },
    );
}

export function percentile(values, fraction) {
    const sorted = [...values].sort((a, b) => a - b);
    if (sorted.length === 0) return null;
    return sorted[Math.min(sorted.length - 1, Math.round(fraction * (sorted.length - 1)))];
}

export function summary(values) {
    const round = (value) => (value === null ? null : Math.round(value * 10) / 10);
    return {
        samples: values.length,
        p50: round(percentile(values, 0.5)),
        p95: round(percentile(values, 0.95)),
        max: round(percentile(values, 1)),
    };
}

/**
 * Measures one script: `samples` keystrokes that draw the squiggle and as many that clear it.
 * Returns {appear: [ms...], clear: [ms...], timeouts}.
 */
export async function measureScript(page, name, probe, samples, { checkpoint }) {
    await installProbe(page);
    await openFile(page, name);
    await goToLine(page, probe.line);
    const initial = await steadySquiggles(page, name);
    log(`${name} (${probe.lines} lines): ${initial} squiggle(s) in view; typing "#" before line ${probe.line} (${probe.text})`);
    for (let i = 0; i < 2; i += 1) {
        const status = await textOf(page.locator('.statusbar-item').filter({ hasText: /Ln \d+/ }));
        if (status.includes(`Col ${probe.column}`)) break;
        await page.keyboard.press('Home');
        await sleep(100);
    }
    const status = await textOf(page.locator('.statusbar-item').filter({ hasText: /Ln \d+/ }));
    if (!status.includes(`Ln ${probe.line}, Col ${probe.column}`)) {
        fail(`the cursor is at "${status.trim()}", not before ${probe.text} (Ln ${probe.line}, Col ${probe.column})`);
    }
    const result = { appear: [], clear: [], timeouts: 0 };
    const warmup = 2;
    for (let i = 0; i < samples + warmup; i += 1) {
        for (const [direction, key, list] of [
            [1, '#', result.appear],
            [-1, 'Backspace', result.clear],
        ]) {
            await sleep(350 + Math.round(Math.random() * 250));
            await arm(page, direction);
            await page.keyboard.press(key);
            const ms = await measured(page, 5_000);
            if (ms === null) {
                result.timeouts += 1;
                // Resynchronise: wait for the state this keystroke should lead to.
                await sleep(1000);
                if (result.timeouts > 3) {
                    fail(`${name}: ${result.timeouts} keystrokes drew no squiggle change within 5 s`);
                }
                continue;
            }
            if (i === 0 && direction > 0) {
                if (!(await squiggleOnLine(page, probe.flagged_line))) {
                    fail(`${name}: commenting out line ${probe.line} drew no squiggle on line ${probe.flagged_line} (${probe.rule})`);
                }
                await checkpoint(`latency-${name}`);
            }
            if (i >= warmup) list.push(ms);
        }
    }
    return result;
}
