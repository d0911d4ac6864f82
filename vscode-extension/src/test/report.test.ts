/**
 * The report from real envelopes (src/test/fixtures/*.json, made with `torchlint run CHECK SCRIPT
 * --output-format json` on the scripts of tests/runtime/scripts/).
 */

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { chartConfig, DATA_ELEMENT_ID, decadeLabel } from '../report/charts';
import { contentSecurityPolicy, escapeHtml, renderReportHtml, scriptJson } from '../report/html';
import { HISTORY_LENGTH, recordOf, RunRecord, withRecord } from '../report/history';
import {
    BarChart,
    buildReport,
    formatNumber,
    isCancelled,
    isEnvelope,
    LineChart,
    ReportModel,
    sweepCeiling,
    Table,
} from '../report/model';
import fit from './fixtures/fit.json';
import grads from './fixtures/grads.json';
import lrFind from './fixtures/lr-find.json';
import overfitError from './fixtures/overfit-error.json';
import overfit from './fixtures/overfit.json';
import profile from './fixtures/profile.json';

const FIXTURES: Record<string, Record<string, unknown>> = {
    overfit,
    grads,
    profile,
    fit,
    'lr-find': lrFind,
    'overfit-error': overfitError,
};

const OPTIONS = { cspSource: 'vscode-webview://abc', nonce: 'bm9uY2U=', scriptUri: 'vscode-webview://abc/dist/webview.js' };

function render(model: ReportModel): string {
    return renderReportHtml(model, OPTIONS);
}

function table(model: ReportModel, title: string): Table {
    const found = model.tables.find((candidate) => candidate.title === title);
    assert.ok(found, `table "${title}" in ${model.tables.map((t) => t.title).join(', ')}`);
    return found;
}

/** The chart specs as the webview script reads them from the page. */
function chartsInPage(html: string): unknown[] {
    const match = new RegExp(`<script type="application/json" id="${DATA_ELEMENT_ID}">(.*?)</script>`, 's').exec(html);
    assert.ok(match, 'the page carries the chart data');
    return (JSON.parse(match[1]) as { charts: unknown[] }).charts;
}

describe('envelopes', () => {
    test('every fixture is an envelope; refusals and failures are not', () => {
        for (const [name, envelope] of Object.entries(FIXTURES)) {
            assert.equal(isEnvelope(envelope), true, name);
        }
        assert.equal(isEnvelope({ status: 'refused', reason: 'disabled', message: 'off' }), false);
        assert.equal(isEnvelope({ status: 'failed', command: 'x', message: 'boom' }), false);
        assert.equal(isEnvelope(null), false);
        assert.equal(isEnvelope('text'), false);
    });

    test('a cancelled run is recognised', () => {
        assert.equal(isCancelled({ ...overfitError, error: { ...overfitError.error, kind: 'cancelled' } }), true);
        assert.equal(isCancelled(overfitError), false);
        assert.equal(isCancelled(overfit), false);
    });
});

describe('report model', () => {
    test('overfit: verdict, facts and the loss curve', () => {
        const model = buildReport(overfit);
        assert.equal(model.title, 'torchlint: Overfit one batch (plain.py)');
        assert.equal(model.tone, 'good');
        assert.equal(model.headline, 'Pass: the model memorised one batch');
        assert.equal(model.summary, overfit.summary);
        assert.equal(model.charts.length, 1);
        const chart = model.charts[0] as LineChart;
        assert.equal(chart.kind, 'line');
        const loss = chart.series[0];
        assert.equal(loss.label, 'loss');
        assert.equal(loss.points.length, overfit.payload.loss_curve.length);
        assert.deepEqual(loss.points[0], [1, overfit.payload.loss_curve[0]]);
        assert.ok(chart.series.some((series) => series.label.startsWith('pass threshold') && series.dashed));
        const facts = Object.fromEntries(model.facts.map((fact) => [fact.label, fact.value]));
        assert.equal(facts.Steps, '40 of 40');
        assert.match(facts.Loss, /^1\.409 → 0\.08101$/);
        assert.match(facts['Batch accuracy'], /→ 100\.0%/);
    });

    test('grads: a headline that agrees with a table of ok rows', () => {
        const healthyRows = {
            ...grads,
            payload: {
                ...grads.payload,
                params: grads.payload.params.map((param) => ({ ...param, status: 'ok' })),
            },
            diagnostics: [
                {
                    code: 'TLR107',
                    name: 'gradients-not-cleared',
                    severity: 'error',
                    message: 'the gradients are not cleared between optimizer steps',
                    filename: '/t.py',
                    line: 9,
                },
            ],
        };
        const model = buildReport(healthyRows);
        assert.equal(model.headline, "Problems: gradients not cleared; every parameter's gradient looks right");
    });

    test('grads: parameters whose optimizer had not stepped are neither wrong nor first', () => {
        // A GAN's generator within a short scan: its optimizer never stepped, so nothing was judged.
        const params = grads.payload.params.map((param, index) => ({
            ...param,
            status: index < 2 ? 'not_scanned' : 'ok',
        }));
        const model = buildReport({ ...grads, payload: { ...grads.payload, params }, diagnostics: [] });
        assert.ok(!model.headline.includes('wrong gradient'), model.headline);
        const rows = table(model, 'Gradients (worst first)').rows;
        assert.deepEqual(rows.slice(-2).map((row) => [row[2].text, row[2].tone]), [
            ['its optimizer did not step', 'neutral'],
            ['its optimizer did not step', 'neutral'],
        ]);
    });

    test('grads: the gradient table worst first, with links to where parameters are created', () => {
        const model = buildReport(grads);
        assert.equal(model.tone, 'bad');
        // The headline counts what the table shows (frozen layers are not wrong).
        assert.equal(model.headline, 'Problems: 4 of 8 parameters have a wrong gradient');
        const gradients = table(model, 'Gradients (worst first)');
        const order = gradients.rows.map((row) => [row[0].text, row[2].text]);
        assert.deepEqual(order, [
            ['aux_head.weight', 'no gradient'],
            ['aux_head.bias', 'no gradient'],
            ['head.bias', 'not in optimizer'],
            ['head.weight', 'not in optimizer'],
            ['body.weight', 'ok'],
            ['body.bias', 'ok'],
            ['embed.weight', 'frozen'],
            ['embed.bias', 'frozen'],
        ]);
        const aux = gradients.rows[0][0];
        assert.deepEqual(aux.link, { file: '/work/main/tests/runtime/scripts/grads_issues.py', line: 15 });
        assert.equal(gradients.rows[0][2].tone, 'bad');
        const findings = table(model, 'What the scan found');
        assert.equal(findings.rows.length, 3);
        // diagnostics: errors first, in the envelope's order, each with a location
        assert.deepEqual(
            model.findings.map((finding) => [finding.code, finding.severity, finding.location?.line]),
            [
                ['TLR205', 'error', 26],
                ['TLR201', 'error', 15],
                ['TLR204', 'info', 12],
            ],
        );
    });

    test('profile: stage shares as a bar chart, stage table and hints with locations', () => {
        const model = buildReport(profile);
        assert.equal(model.tone, 'warning');
        const bar = model.charts.find((chart): chart is BarChart => chart.kind === 'bar');
        assert.ok(bar);
        assert.equal(bar.labels[0], 'waiting for data');
        assert.equal(bar.values[0], 88.6);
        const total = bar.values.reduce((sum, value) => sum + value, 0);
        assert.ok(Math.abs(total - 100) < 1, `shares add up to 100%, got ${total}`);
        assert.equal(table(model, 'Stages').rows.length, profile.payload.stages.length);
        const hint = table(model, 'Hints').rows[0];
        assert.deepEqual(hint[1].link, { file: '/work/main/tests/runtime/scripts/profile_slow_loader.py', line: 24 });
        assert.equal(hint[1].text, 'profile_slow_loader.py:24');
    });

    test('fit: training and validation loss per epoch', () => {
        const model = buildReport(fit);
        assert.equal(model.headline, 'Overfitting: the validation loss rises');
        const chart = model.charts[0] as LineChart;
        assert.deepEqual(
            chart.series.map((series) => series.label),
            ['training loss', 'validation loss'],
        );
        assert.equal(chart.series[1].points.length, fit.payload.val_loss.length);
        assert.equal(chart.xLabel, 'epoch');
    });

    test('lr-find: the sweep on a log x axis with the suggestion marked', () => {
        const model = buildReport(lrFind);
        assert.equal(model.tone, 'good');
        const chart = model.charts[0] as LineChart;
        assert.equal(chart.xLog, true);
        const marker = chart.series.find((series) => series.markers && series.color === 'green');
        assert.ok(marker);
        assert.equal(marker.points[0][0], lrFind.payload.suggested_lr);
        assert.equal(marker.points[0][1], lrFind.payload.smoothed[lrFind.payload.suggested_step]);
        const facts = Object.fromEntries(model.facts.map((fact) => [fact.label, fact.value]));
        assert.equal(facts['Suggested learning rate'], '0.05462');
    });

    test('a crashed run: the error, where it happened and the output tail', () => {
        const model = buildReport(overfitError);
        assert.equal(model.tone, 'bad');
        assert.equal(model.headline, 'The run failed');
        assert.ok(model.error);
        assert.equal(model.error.kind, 'crash');
        assert.deepEqual(model.error.location, { file: '/work/main/tests/runtime/scripts/crash.py', line: 17 });
        assert.ok(model.error.outputTail.length > 0);
        assert.equal(model.facts.some((fact) => fact.label === 'Loss'), false, 'no result facts for a failed run');
    });

    test('survives a minimal or odd envelope', () => {
        const model = buildReport({ check: 'overfit', status: 'completed', verdict: 'pass', summary: 's', payload: null });
        assert.equal(model.charts.length, 0);
        assert.doesNotThrow(() => render(model));
        const unknown = buildReport({ check: 'future', status: 'completed', verdict: 'maybe', summary: 's' });
        assert.equal(unknown.headline, 'Verdict: maybe');
        assert.equal(unknown.title, 'torchlint: future');
    });

    test('numbers are readable', () => {
        assert.equal(formatNumber(1.40912), '1.409');
        assert.equal(formatNumber(0.0810123), '0.08101');
        assert.equal(formatNumber(1e-7), '1.00e-7');
        assert.equal(formatNumber(123456), '1.23e5');
        assert.equal(formatNumber(null), '–');
        assert.equal(formatNumber(0), '0');
    });
});

describe('report HTML', () => {
    test('every fixture renders with a strict CSP, one nonce-bearing script and no inline handlers', () => {
        for (const [name, envelope] of Object.entries(FIXTURES)) {
            const html = render(buildReport(envelope));
            assert.match(html, /<meta http-equiv="Content-Security-Policy" content="default-src &#39;none&#39;/, name);
            assert.equal(html.includes('unsafe-inline'), false, name);
            assert.equal(html.includes('unsafe-eval'), false, name);
            assert.equal(/\son[a-z]+=/i.test(html), false, `${name}: no inline event handlers`);
            assert.equal(/\sstyle=/i.test(html), false, `${name}: no style attributes`);
            const scripts = html.match(/<script\b[^>]*>/g) ?? [];
            const executable = scripts.filter((tag) => !tag.includes('type="application/json"'));
            assert.deepEqual(executable, [`<script nonce="${OPTIONS.nonce}" src="${OPTIONS.scriptUri}">`], name);
        }
        const csp = contentSecurityPolicy(OPTIONS);
        assert.match(csp, /script-src 'nonce-bm9uY2U='/);
        assert.match(csp, /style-src vscode-webview:\/\/abc 'nonce-bm9uY2U='/);
    });

    test('the verdict, the charts and the jump links are in the page', () => {
        const html = render(buildReport(grads));
        assert.match(html, /<h1 class="headline">Problems: 4 of 8 parameters have a wrong gradient<\/h1>/);
        assert.match(html, /<title>torchlint: Gradient scan \(grads_issues.py\)<\/title>/);
        assert.match(
            html,
            /<a href="#" class="jump" data-file="\/work\/main\/tests\/runtime\/scripts\/grads_issues.py" data-line="26"[^>]*>grads_issues.py:26<\/a>/,
        );
        assert.match(html, />aux_head.weight<\/a>/);
        const charts = chartsInPage(html);
        assert.equal(charts.length, buildReport(grads).charts.length);
        for (let index = 0; index < charts.length; index += 1) {
            assert.ok(html.includes(`<canvas id="chart-${index}"`), `canvas ${index}`);
        }
    });

    test('envelope text is escaped, also inside the chart data', () => {
        const hostile = {
            ...overfit,
            summary: '<img src=x onerror=alert(1)> & "quotes"',
            script: '/tmp/<b>evil</b>.py',
            diagnostics: [
                {
                    code: 'TLR001',
                    name: 'x',
                    severity: 'error',
                    message: '</script><script>alert(1)</script>',
                    filename: '/tmp/a"b.py',
                    line: 3,
                    evidence: {},
                },
            ],
        };
        const model = buildReport(hostile);
        model.charts.push({
            kind: 'bar',
            title: 'x',
            labels: ['</script><script>alert(2)</script>'],
            values: [1],
            valueLabel: 'v',
        });
        const html = render(model);
        assert.equal(html.includes('<img'), false);
        assert.equal(html.includes('<script>alert'), false);
        assert.equal(html.includes('<b>evil'), false);
        assert.match(html, /&lt;img src=x onerror=alert\(1\)&gt; &amp; &quot;quotes&quot;/);
        assert.match(html, /data-file="\/tmp\/a&quot;b.py"/);
        const charts = chartsInPage(html) as Array<{ labels?: string[] }>;
        assert.equal(charts[charts.length - 1].labels?.[0], '</script><script>alert(2)</script>');
        assert.equal(escapeHtml(`'`), '&#39;');
        assert.equal(scriptJson('</script>'), '"\\u003c/script\\u003e"');
    });

    test('the error section shows the script output', () => {
        const html = render(buildReport(overfitError));
        assert.match(html, /<h2>Error: crash<\/h2>/);
        assert.match(html, /RuntimeError: corrupt shard 17/);
        assert.match(html, /data-line="17"/);
    });
});

describe('chart.js configurations', () => {
    test('line charts: linear or log axes, one dataset per series', () => {
        const overfitChart = chartConfig(buildReport(overfit).charts[0]);
        assert.equal(overfitChart.type, 'line');
        assert.equal(overfitChart.data.datasets.length, 3);
        const lrChart = chartConfig(buildReport(lrFind).charts[0]);
        const scales = lrChart.options?.scales as Record<string, { type: string }>;
        assert.equal(scales.x.type, 'logarithmic');
        assert.equal(scales.y.type, 'linear');
        const first = lrChart.data.datasets[0].data[0] as { x: number; y: number };
        assert.equal(first.x, lrFind.payload.lrs[0]);
    });

    test('the lr sweep is clipped above its descent and labelled by decades', () => {
        const smoothed = lrFind.payload.smoothed;
        const ceiling = sweepCeiling(smoothed);
        assert.ok(ceiling !== undefined);
        const lowest = smoothed.indexOf(Math.min(...smoothed));
        assert.ok(ceiling > Math.max(...smoothed.slice(0, lowest + 1)));
        assert.ok(ceiling < Math.max(...lrFind.payload.losses), 'the diverging tail leaves the chart');
        const config = chartConfig(buildReport(lrFind).charts[0]);
        assert.equal((config.options?.scales as Record<string, { max?: number }>).y.max, ceiling);
        assert.equal(sweepCeiling([null, null]), undefined);
        assert.equal(decadeLabel(1e-4), '1e-4');
        assert.equal(decadeLabel(2e-4), '');
        assert.equal(decadeLabel(1), '1');
        assert.equal(decadeLabel(0.1), '1e-1');
    });

    test('the stage bar chart is horizontal, in percent', () => {
        const chart = buildReport(profile).charts.find((candidate) => candidate.kind === 'bar');
        assert.ok(chart);
        const config = chartConfig(chart);
        assert.equal(config.type, 'bar');
        assert.equal(config.options?.indexAxis, 'y');
        assert.deepEqual(config.data.labels, (chart as BarChart).labels);
    });
});

describe('the last runs of a script', () => {
    const at = Date.UTC(2026, 0, 2, 3, 4, 5);

    test('a record keeps the check, the verdict and the loss curve', () => {
        const record = recordOf(overfit, at);
        assert.ok(record);
        assert.equal(record.check, 'overfit');
        assert.equal(record.verdict, 'pass');
        assert.ok(record.losses.length > 1);
        assert.equal(recordOf({ check: 'overfit' }, at), undefined); // no script: nothing to compare
    });

    test('newest first, at most a few per script and check', () => {
        let records: RunRecord[] = [];
        for (let i = 0; i < HISTORY_LENGTH + 3; i += 1) {
            records = withRecord(records, { ...recordOf(overfit, at + i)!, summary: `run ${i}` });
        }
        records = withRecord(records, recordOf(grads, at)!);
        const overfits = records.filter((r) => r.check === 'overfit');
        assert.equal(overfits.length, HISTORY_LENGTH);
        assert.equal(overfits[0].summary, `run ${HISTORY_LENGTH + 2}`);
        assert.equal(records.filter((r) => r.check === 'grads').length, 1);
    });

    test('a second run overlays the loss curves and lists the verdicts; a first run shows none', () => {
        const before = { ...recordOf(overfit, at)!, verdict: 'fail', losses: [2, 1.9, 1.8, 1.85] };
        const after = recordOf(overfit, at + 60_000)!;
        const model = buildReport(overfit, [after, before]);
        const chart = model.charts.find((c) => c.kind === 'line' && c.title.startsWith('Loss of the last 2 runs'));
        assert.ok(chart && chart.kind === 'line');
        assert.deepEqual(
            chart.series.map((s) => s.label.split(' (')[1]),
            ['pass)', 'fail)'],
        );
        assert.ok(model.tables.some((t) => t.title === 'The last runs' && t.rows.length === 2));
        assert.equal(model.rerun, true);
        const first = buildReport(overfit, [after]);
        assert.equal(first.tables.some((t) => t.title === 'The last runs'), false);
        assert.match(render(model), /<button class="rerun" id="rerun"/);
    });
});
