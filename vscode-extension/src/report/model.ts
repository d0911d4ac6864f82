/**
 * A runtime check's result (the JSON envelope of `torchlint run ... --output-format json`, which the
 * server's runtime commands return; schema in `torchlint/runtime/schema.json`) turned into what the
 * report shows: a verdict headline, facts, charts, tables and the findings with their locations.
 *
 * Pure: no `vscode`, no DOM. Every field of the envelope is read defensively, since the report
 * must render whatever a server version sends (a missing payload key drops that section).
 */

import type { RunRecord } from './history';

export type Tone = 'good' | 'warning' | 'bad' | 'neutral';

/** A place in the user's code (line 1-based). */
export interface Location {
    file: string;
    line: number;
}

export interface Fact {
    label: string;
    value: string;
}

/** One chart line: [x, y] points (y null: a gap). */
export interface Series {
    label: string;
    points: Array<[number, number | null]>;
    color: SeriesColor;
    dashed?: boolean;
    /** Draw only the points (a marker such as the suggested learning rate). */
    markers?: boolean;
}

export type SeriesColor = 'blue' | 'orange' | 'green' | 'red' | 'purple' | 'yellow' | 'muted';

export interface LineChart {
    kind: 'line';
    title: string;
    xLabel: string;
    yLabel: string;
    xLog: boolean;
    yLog: boolean;
    /** x values are whole numbers (steps, epochs). */
    xIntegers: boolean;
    /** Clip the y axis here (a diverging tail would flatten the rest of the curve). */
    yMax?: number;
    series: Series[];
}

export interface BarChart {
    kind: 'bar';
    title: string;
    /** One bar per label; values are percentages. */
    labels: string[];
    values: number[];
    valueLabel: string;
}

export type Chart = LineChart | BarChart;

export interface Cell {
    text: string;
    link?: Location;
    tone?: Tone;
    numeric?: boolean;
}

export interface Table {
    title: string;
    columns: string[];
    rows: Cell[][];
    note?: string;
}

export interface Finding {
    code: string;
    name: string;
    severity: string;
    message: string;
    location?: Location;
}

export interface ErrorInfo {
    kind: string;
    message: string;
    location?: Location;
    outputTail: string[];
}

export interface ReportModel {
    /** The webview panel's title, e.g. "torchlint: Overfit one batch (train.py)". */
    title: string;
    check: string;
    checkTitle: string;
    status: string;
    verdict: string | null;
    tone: Tone;
    /** The verdict in a few words, e.g. "Pass: the model memorised one batch". */
    headline: string;
    /** Whether the report offers to run the same check again. */
    rerun?: boolean;
    summary: string;
    script?: Location;
    scriptName?: string;
    facts: Fact[];
    charts: Chart[];
    tables: Table[];
    findings: Finding[];
    error?: ErrorInfo;
}

// --- reading the envelope ------------------------------------------------------------------

type Json = Record<string, unknown>;

function isRecord(value: unknown): value is Json {
    return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function str(value: unknown): string | undefined {
    return typeof value === 'string' ? value : undefined;
}

function num(value: unknown): number | undefined {
    return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

function int(value: unknown): number | undefined {
    const n = num(value);
    return n !== undefined && Number.isInteger(n) ? n : undefined;
}

function arr(value: unknown): unknown[] {
    return Array.isArray(value) ? value : [];
}

function numbers(value: unknown): Array<number | null> {
    return arr(value).map((item) => num(item) ?? null);
}

function location(file: unknown, line: unknown): Location | undefined {
    const name = str(file);
    const row = int(line);
    return name && row !== undefined && row >= 1 ? { file: name, line: row } : undefined;
}

function siteLocation(site: unknown): Location | undefined {
    return isRecord(site) ? location(site.filename, site.line) : undefined;
}

/** The last path component of a file name (POSIX or Windows). */
export function baseName(file: string): string {
    const parts = file.split(/[\\/]/);
    return parts[parts.length - 1] || file;
}

export const CHECK_TITLES: Record<string, string> = {
    overfit: 'Overfit one batch',
    grads: 'Gradient scan',
    profile: 'Profile step',
    fit: 'Training and validation loss',
    'lr-find': 'Learning-rate finder',
};

const STATUSES = new Set(['completed', 'capture_failed', 'error', 'timeout']);

/**
 * Whether a command's result is a runtime envelope (rather than a refusal such as
 * `{"status": "refused", ...}` or the server's `{"status": "failed", ...}`).
 */
export function isEnvelope(value: unknown): value is Json {
    return (
        isRecord(value) &&
        typeof value.check === 'string' &&
        typeof value.status === 'string' &&
        STATUSES.has(value.status) &&
        typeof value.summary === 'string'
    );
}

/** Whether the envelope is a run the user cancelled (nothing worth a report). */
export function isCancelled(envelope: unknown): boolean {
    return isRecord(envelope) && isRecord(envelope.error) && envelope.error.kind === 'cancelled';
}

// --- formatting ---------------------------------------------------------------------------

/** A number in 4 significant digits (exponent form for very small or large ones); "–" for none. */
export function formatNumber(value: number | null | undefined, digits = 4): string {
    if (value === null || value === undefined || !Number.isFinite(value)) {
        return value === null || value === undefined ? '–' : String(value);
    }
    if (value === 0) {
        return '0';
    }
    const magnitude = Math.abs(value);
    if (magnitude >= 1e5 || magnitude < 1e-3) {
        return value.toExponential(digits - 2).replace('e+', 'e');
    }
    return String(Number(value.toPrecision(digits)));
}

export function formatPercent(share: number | null | undefined): string {
    return share === null || share === undefined ? '–' : `${(share * 100).toFixed(1)}%`;
}

function formatMs(value: number | null | undefined): string {
    return value === null || value === undefined ? '–' : `${formatNumber(value)} ms`;
}

function formatShape(value: unknown): string {
    const dims = arr(value).map((dim) => String(int(dim) ?? '?'));
    return `[${dims.join(', ')}]`;
}

function lastFinite(values: Array<number | null>): number | null {
    for (let index = values.length - 1; index >= 0; index -= 1) {
        const value = values[index];
        if (value !== null) {
            return value;
        }
    }
    return null;
}

function points(values: Array<number | null>, firstX = 1): Array<[number, number | null]> {
    return values.map((value, index) => [index + firstX, value]);
}

/** Log scale for a positive series spanning more than a factor of 20. */
function wantsLog(series: Series[]): boolean {
    const values = series.flatMap((line) => line.points.map(([, y]) => y)).filter((y): y is number => y !== null);
    if (values.length < 2 || values.some((y) => y <= 0)) {
        return false;
    }
    return Math.max(...values) / Math.min(...values) > 20;
}

// --- verdicts -----------------------------------------------------------------------------

const VERDICTS: Record<string, { tone: Tone; headline: string }> = {
    'overfit:pass': { tone: 'good', headline: 'Pass: the model memorised one batch' },
    'overfit:fail': { tone: 'bad', headline: 'Fail: the model could not memorise one batch' },
    'overfit:nan': { tone: 'bad', headline: 'NaN: the loss stopped being finite' },
    'grads:healthy': { tone: 'good', headline: 'Healthy: every gradient looks right' },
    'grads:problems': { tone: 'bad', headline: 'Problems: some gradients are wrong' },
    'profile:ok': { tone: 'good', headline: 'OK: no bottleneck stands out' },
    'profile:hints': { tone: 'warning', headline: 'Hints: the step time can improve' },
    'profile:stopped': { tone: 'warning', headline: 'Stopped: too few steps were measured' },
    'fit:healthy': { tone: 'good', headline: 'Healthy: both losses fall' },
    'fit:overfitting': { tone: 'bad', headline: 'Overfitting: the validation loss rises' },
    'fit:underfitting': { tone: 'bad', headline: 'Underfitting: the training loss barely falls' },
    'fit:nan': { tone: 'bad', headline: 'NaN: a loss stopped being finite' },
    'fit:inconclusive': { tone: 'neutral', headline: 'Inconclusive: not enough epochs to tell' },
    'fit:stopped': { tone: 'warning', headline: 'Stopped before the end' },
    'lr-find:suggested': { tone: 'good', headline: 'A learning rate is suggested' },
    'lr-find:no_suggestion': { tone: 'warning', headline: 'No learning rate could be suggested' },
    'lr-find:stopped': { tone: 'warning', headline: 'Stopped before the end of the sweep' },
};

const STATUS_HEADLINES: Record<string, string> = {
    capture_failed: 'Could not find the training loop',
    error: 'The run failed',
    timeout: 'The run timed out',
};

function verdictOf(check: string, status: string, verdict: string | null): { tone: Tone; headline: string } {
    if (status !== 'completed') {
        return { tone: 'bad', headline: STATUS_HEADLINES[status] ?? `Status: ${status}` };
    }
    const known = verdict !== null ? VERDICTS[`${check}:${verdict}`] : undefined;
    return known ?? { tone: 'neutral', headline: verdict !== null ? `Verdict: ${verdict}` : 'No verdict' };
}

// --- the checks' sections -----------------------------------------------------------------

interface Sections {
    facts: Fact[];
    charts: Chart[];
    tables: Table[];
}

function overfitSections(payload: Json): Sections {
    const facts: Fact[] = [];
    const charts: Chart[] = [];
    const curve = numbers(payload.loss_curve);
    const initial = num(payload.initial_loss);
    const final = num(payload.final_loss);
    facts.push({ label: 'Steps', value: `${int(payload.steps_run) ?? '–'} of ${int(payload.steps_requested) ?? '–'}` });
    facts.push({ label: 'Loss', value: `${formatNumber(initial)} → ${formatNumber(final)}` });
    const ratio = num(payload.ratio);
    const target = num(payload.target_ratio);
    if (ratio !== undefined) {
        facts.push({
            label: 'Final / initial',
            value: `${formatNumber(ratio, 3)}${target !== undefined ? ` (pass at ≤ ${formatNumber(target)})` : ''}`,
        });
    }
    const expected = num(payload.expected_initial_loss);
    if (expected !== undefined) {
        facts.push({ label: 'Expected initial loss', value: formatNumber(expected) });
    }
    const accuracyBefore = num(payload.initial_accuracy);
    const accuracyAfter = num(payload.final_accuracy);
    if (accuracyBefore !== undefined || accuracyAfter !== undefined) {
        facts.push({
            label: 'Batch accuracy',
            value: `${formatPercent(accuracyBefore)} → ${formatPercent(accuracyAfter)}`,
        });
    }
    const nanStep = int(payload.nan_step);
    if (nanStep !== undefined) {
        facts.push({ label: 'Non-finite loss at step', value: String(nanStep) });
    }
    const source = str(payload.batch_source);
    if (source) {
        facts.push({ label: 'Batch', value: source });
    }
    if (curve.length > 0) {
        const series: Series[] = [{ label: 'loss', points: points(curve), color: 'blue' }];
        if (initial !== undefined && target !== undefined && initial > 0) {
            const threshold = initial * target;
            series.push({
                label: `pass threshold (${formatNumber(target)} × initial)`,
                points: [
                    [1, threshold],
                    [curve.length, threshold],
                ],
                color: 'green',
                dashed: true,
            });
        }
        if (expected !== undefined) {
            series.push({
                label: 'expected initial loss',
                points: [
                    [1, expected],
                    [curve.length, expected],
                ],
                color: 'muted',
                dashed: true,
            });
        }
        charts.push({
            kind: 'line',
            title: 'Loss on the cached batch',
            xLabel: 'step',
            yLabel: 'loss',
            xLog: false,
            yLog: wantsLog(series.slice(0, 1)),
            xIntegers: true,
            series,
        });
    }
    return { facts, charts, tables: [] };
}

/** Gradient statuses, worst first. */
const GRAD_STATUS_ORDER = ['nonfinite', 'none', 'zero', 'not_in_optimizer', 'ok', 'frozen', 'not_scanned'];

const GRAD_STATUS_LABELS: Record<string, string> = {
    nonfinite: 'non-finite',
    none: 'no gradient',
    zero: 'zero',
    not_in_optimizer: 'not in optimizer',
    ok: 'ok',
    frozen: 'frozen',
    not_scanned: 'its optimizer did not step',
};

const GRAD_STATUS_TONES: Record<string, Tone> = {
    nonfinite: 'bad',
    none: 'bad',
    zero: 'bad',
    not_in_optimizer: 'bad',
    ok: 'good',
    frozen: 'neutral',
    not_scanned: 'neutral',
};

interface GradRow {
    name: string;
    shape: string;
    status: string;
    gradNorm: number | null;
    weightNorm: number | null;
    ratio: number | null;
    site?: Location;
}

/**
 * The parameters worst first: by status (non-finite, no gradient, zero, not in an optimizer, ok,
 * frozen, not scanned because their optimizer had not stepped yet), and among the healthy ones the update ratio furthest from the median first (in
 * orders of magnitude), where vanishing or exploding layers show.
 */
export function sortGradRows(rows: GradRow[]): GradRow[] {
    const rank = (status: string): number => {
        const index = GRAD_STATUS_ORDER.indexOf(status);
        return index === -1 ? 0 : index; // an unknown status is worth a look
    };
    const ratios = rows
        .map((row) => row.ratio)
        .filter((ratio): ratio is number => ratio !== null && ratio > 0)
        .sort((a, b) => a - b);
    const median = ratios.length > 0 ? ratios[Math.floor(ratios.length / 2)] : 1;
    const spread = (row: GradRow): number =>
        row.ratio !== null && row.ratio > 0 ? Math.abs(Math.log10(row.ratio / median)) : -1;
    return rows
        .map((row, index) => ({ row, index }))
        .sort((a, b) => rank(a.row.status) - rank(b.row.status) || spread(b.row) - spread(a.row) || a.index - b.index)
        .map(({ row }) => row);
}

function gradsSections(payload: Json): Sections {
    const facts: Fact[] = [];
    const charts: Chart[] = [];
    const tables: Table[] = [];
    const params = arr(payload.params).filter(isRecord);
    facts.push({ label: 'Steps', value: `${int(payload.steps_run) ?? '–'} of ${int(payload.steps_requested) ?? '–'}` });
    facts.push({ label: 'Parameters', value: String(params.length) });
    const depth = isRecord(payload.depth) ? payload.depth : undefined;
    if (depth && str(depth.verdict)) {
        facts.push({
            label: 'Depth',
            value:
                `${str(depth.verdict)} (update ratio ${formatNumber(num(depth.first_third_ratio))} in the first third, ` +
                `${formatNumber(num(depth.last_third_ratio))} in the last)`,
        });
    }
    const globalNorm = numbers(payload.global_grad_norm);
    const losses = numbers(payload.losses);
    if (globalNorm.length > 1) {
        const series: Series[] = [{ label: 'global gradient norm', points: points(globalNorm), color: 'purple' }];
        charts.push({
            kind: 'line',
            title: 'Global gradient norm per step',
            xLabel: 'step',
            yLabel: 'L2 norm',
            xLog: false,
            yLog: wantsLog(series),
            xIntegers: true,
            series,
        });
    }
    if (losses.length > 1) {
        const series: Series[] = [{ label: 'loss', points: points(losses), color: 'blue' }];
        charts.push({
            kind: 'line',
            title: 'Loss per step',
            xLabel: 'step',
            yLabel: 'loss',
            xLog: false,
            yLog: false,
            xIntegers: true,
            series,
        });
    }
    const rows: GradRow[] = params.map((param) => ({
        name: str(param.name) ?? '?',
        shape: formatShape(param.shape),
        status: str(param.status) ?? '?',
        gradNorm: lastFinite(numbers(param.grad_norm)),
        weightNorm: num(param.weight_norm) ?? null,
        ratio: num(param.ratio) ?? null,
        site: siteLocation(param.site),
    }));
    if (rows.length > 0) {
        tables.push({
            title: 'Gradients (worst first)',
            columns: ['Parameter', 'Shape', 'Status', 'Grad norm (last step)', 'Weight norm', 'Update ratio'],
            rows: sortGradRows(rows).map((row) => [
                { text: row.name, link: row.site },
                { text: row.shape },
                { text: GRAD_STATUS_LABELS[row.status] ?? row.status, tone: GRAD_STATUS_TONES[row.status] ?? 'warning' },
                { text: formatNumber(row.gradNorm), numeric: true },
                { text: formatNumber(row.weightNorm), numeric: true },
                { text: formatNumber(row.ratio), numeric: true },
            ]),
            note: 'Update ratio: the gradient norm over the weight norm. Click a name to see where the parameter is created.',
        });
    }
    const findings = arr(payload.findings).filter(isRecord);
    if (findings.length > 0) {
        tables.push({
            title: 'What the scan found',
            columns: ['Severity', 'Finding', 'Parameters'],
            rows: findings.map((finding) => [
                { text: str(finding.severity) ?? '', tone: severityTone(str(finding.severity)) },
                { text: str(finding.message) ?? str(finding.kind) ?? '' },
                { text: arr(finding.params).filter((name) => typeof name === 'string').join(', ') },
            ]),
        });
    }
    return { facts, charts, tables };
}

const STAGE_LABELS: Record<string, string> = {
    data_wait: 'waiting for data',
    h2d_and_preprocess: 'to device and preprocess',
    forward: 'forward',
    loss: 'loss',
    backward: 'backward',
    optimizer: 'optimizer step',
    other: 'other',
};

function profileSections(payload: Json): Sections {
    const facts: Fact[] = [];
    const charts: Chart[] = [];
    const tables: Table[] = [];
    const stepMs = isRecord(payload.step_ms) ? payload.step_ms : {};
    facts.push({
        label: 'Step time',
        value: `${formatMs(num(stepMs.median))} median, ${formatMs(num(stepMs.p90))} p90`,
    });
    const plain = num(stepMs.uninstrumented_median);
    if (plain !== undefined) {
        facts.push({ label: 'Without per-stage timing', value: `${formatMs(plain)} median` });
        facts.push({ label: 'Cost of the timing', value: timingCost(payload) });
    }
    const measured = int(payload.measured_steps);
    if (measured !== undefined) {
        facts.push({ label: 'Measured steps', value: `${measured} (after ${int(payload.warmup_steps) ?? 0} warm-up)` });
    }
    const sync = str(payload.synchronization);
    if (sync) {
        facts.push({ label: 'Timing', value: sync });
    }
    const coverage = num(payload.coverage);
    if (coverage !== undefined) {
        facts.push({ label: 'Coverage', value: formatPercent(coverage) });
    }
    const stages = arr(payload.stages).filter(isRecord);
    if (stages.length > 0) {
        charts.push({
            kind: 'bar',
            title: 'Share of the training step by stage',
            labels: stages.map((stage) => STAGE_LABELS[str(stage.name) ?? ''] ?? str(stage.name) ?? '?'),
            values: stages.map((stage) => Math.round((num(stage.share) ?? 0) * 1000) / 10),
            valueLabel: '% of the step (median)',
        });
        tables.push({
            title: 'Stages',
            columns: ['Stage', 'Median', 'p90', 'Share'],
            rows: stages.map((stage) => [
                { text: STAGE_LABELS[str(stage.name) ?? ''] ?? str(stage.name) ?? '?' },
                { text: formatMs(num(stage.ms_median)), numeric: true },
                { text: formatMs(num(stage.ms_p90)), numeric: true },
                { text: formatPercent(num(stage.share)), numeric: true },
            ]),
        });
    }
    const hints = arr(payload.hints).filter(isRecord);
    if (hints.length > 0) {
        tables.push({
            title: 'Hints',
            columns: ['Hint', 'Where'],
            rows: hints.map((hint) => {
                const where = location(hint.filename, hint.line);
                return [
                    { text: str(hint.message) ?? '' },
                    where ? { text: `${baseName(where.file)}:${where.line}`, link: where } : { text: '' },
                ];
            }),
        });
    }
    const syncs = arr(payload.host_syncs).filter(isRecord);
    if (syncs.length > 0) {
        tables.push({
            title: 'Host synchronisations per step',
            columns: ['Where', 'Per step', 'Kinds'],
            rows: syncs.map((sync) => {
                const where = location(sync.filename, sync.line);
                const kinds = isRecord(sync.kinds)
                    ? Object.entries(sync.kinds)
                          .map(([kind, count]) => `${kind} ×${String(count)}`)
                          .join(', ')
                    : '';
                return [
                    where ? { text: `${baseName(where.file)}:${where.line}`, link: where } : { text: '?' },
                    { text: formatNumber(num(sync.per_step)), numeric: true },
                    { text: kinds },
                ];
            }),
        });
    }
    return { facts, charts, tables };
}

/** What the per-stage timing costs, only as far as the two windows' spreads allow. */
export function timingCost(payload: Json): string {
    const stepMs = isRecord(payload.step_ms) ? payload.step_ms : {};
    const spreads = [stepMs.spread, stepMs.uninstrumented_spread]
        .map((pair) => numbers(pair))
        .filter((pair) => pair.length === 2)
        .map(([low, high]) => `${formatMs(low)}–${formatMs(high)}`);
    const spread = spreads.length === 2 ? ` (middle half of the steps: ${spreads.join(' timed, ')} untimed)` : '';
    const overhead = num(payload.instrumentation_overhead);
    if (overhead !== undefined) {
        const change = (overhead - 1) * 100;
        return change >= 0
            ? `${change.toFixed(0)}%${spread}`
            : `unknown: the timed steps ran faster, so the two windows differ in more than the timing${spread}`;
    }
    if (str(payload.instrumentation_comparison) === 'too few steps') {
        return 'too few steps to tell';
    }
    return `inconclusive: the two windows' spreads overlap${spread}`;
}

function fitSections(payload: Json, summary: string): Sections {
    const facts: Fact[] = [];
    const charts: Chart[] = [];
    const train = numbers(payload.train_loss);
    const val = numbers(payload.val_loss);
    facts.push({ label: 'Epochs', value: `${int(payload.epochs_run) ?? '–'} of ${int(payload.epochs_requested) ?? '–'}` });
    const reason = str(payload.reason);
    if (reason && !summary.includes(reason)) {
        facts.push({ label: 'Why', value: reason });
    }
    const best = int(payload.best_epoch);
    if (best !== undefined) {
        facts.push({ label: 'Best validation epoch', value: String(best) });
    }
    const metric = isRecord(payload.metric) ? str(payload.metric.description) : undefined;
    if (metric) {
        facts.push({ label: 'Metric', value: metric });
    }
    if (train.length > 0 || val.length > 0) {
        const series: Series[] = [
            { label: 'training loss', points: points(train), color: 'blue' },
            { label: 'validation loss', points: points(val), color: 'orange' },
        ];
        const before = num(payload.val_loss_before_training);
        if (before !== undefined) {
            series.push({ label: 'validation loss before training', points: [[0, before]], color: 'muted', markers: true });
        }
        charts.push({
            kind: 'line',
            title: 'Loss per epoch',
            xLabel: 'epoch',
            yLabel: 'loss',
            xLog: false,
            yLog: false,
            xIntegers: true,
            series,
        });
    }
    return { facts, charts, tables: [] };
}

function lrFindSections(payload: Json): Sections {
    const facts: Fact[] = [];
    const charts: Chart[] = [];
    const suggested = num(payload.suggested_lr);
    facts.push({ label: 'Suggested learning rate', value: formatNumber(suggested ?? null) });
    const div10 = num(payload.min_loss_lr_div10);
    if (div10 !== undefined) {
        facts.push({ label: 'Minimum-loss rate / 10', value: formatNumber(div10) });
    }
    const scriptLr = num(payload.script_lr);
    if (scriptLr !== undefined) {
        facts.push({ label: "The script's learning rate", value: formatNumber(scriptLr) });
    }
    const end = str(payload.sweep_end);
    if (end) {
        facts.push({ label: 'Sweep ended', value: end.replace(/_/g, ' ') });
    }
    const why = str(payload.no_suggestion_reason);
    if (why) {
        facts.push({ label: 'No suggestion because', value: why });
    }
    const lrs = numbers(payload.lrs);
    const losses = numbers(payload.losses);
    const smoothed = numbers(payload.smoothed);
    const along = (values: Array<number | null>): Array<[number, number | null]> =>
        lrs.flatMap((lr, index): Array<[number, number | null]> =>
            lr !== null && lr > 0 && index < values.length ? [[lr, values[index]]] : [],
        );
    if (lrs.length > 0) {
        const series: Series[] = [
            { label: 'loss', points: along(losses), color: 'muted' },
            { label: 'smoothed loss', points: along(smoothed), color: 'blue' },
        ];
        const suggestedStep = int(payload.suggested_step);
        if (suggested !== undefined) {
            const y = suggestedStep !== undefined ? (smoothed[suggestedStep] ?? null) : null;
            series.push({ label: `suggested ${formatNumber(suggested)}`, points: [[suggested, y]], color: 'green', markers: true });
        }
        if (scriptLr !== undefined && scriptLr > 0) {
            const nearest = nearestIndex(lrs, scriptLr);
            const y = nearest !== undefined ? (smoothed[nearest] ?? null) : null;
            series.push({ label: `script's ${formatNumber(scriptLr)}`, points: [[scriptLr, y]], color: 'orange', markers: true });
        }
        charts.push({
            kind: 'line',
            title: 'Loss against the learning rate',
            xLabel: 'learning rate (log scale)',
            yLabel: 'loss',
            xLog: true,
            yLog: false,
            xIntegers: false,
            yMax: sweepCeiling(smoothed),
            series,
        });
    }
    return { facts, charts, tables: [] };
}

/**
 * The top of the lr sweep's y axis: a quarter above the highest smoothed loss up to the lowest one
 * (the descent), so the diverging tail leaves the chart instead of squashing the descent.
 */
export function sweepCeiling(smoothed: Array<number | null>): number | undefined {
    let lowest = -1;
    smoothed.forEach((value, index) => {
        if (value !== null && (lowest === -1 || value < (smoothed[lowest] as number))) {
            lowest = index;
        }
    });
    if (lowest === -1) {
        return undefined;
    }
    const descent = smoothed.slice(0, lowest + 1).filter((value): value is number => value !== null);
    const top = Math.max(...descent);
    const bottom = smoothed[lowest] as number;
    return top > bottom ? top + (top - bottom) * 0.25 : undefined;
}

function nearestIndex(values: Array<number | null>, target: number): number | undefined {
    let best: number | undefined;
    let bestDistance = Infinity;
    values.forEach((value, index) => {
        if (value !== null && value > 0) {
            const distance = Math.abs(Math.log(value / target));
            if (distance < bestDistance) {
                best = index;
                bestDistance = distance;
            }
        }
    });
    return best;
}

const SECTIONS: Record<string, (payload: Json, summary: string) => Sections> = {
    overfit: overfitSections,
    grads: gradsSections,
    profile: profileSections,
    fit: fitSections,
    'lr-find': lrFindSections,
};

function severityTone(severity: string | undefined): Tone {
    return severity === 'error' ? 'bad' : severity === 'warning' ? 'warning' : 'neutral';
}

const SEVERITY_ORDER = ['error', 'warning', 'info'];

// --- the model ----------------------------------------------------------------------------

/** The report of one envelope (see `isEnvelope`). */
export function buildReport(envelope: Json, history: RunRecord[] = []): ReportModel {
    const check = str(envelope.check) ?? 'unknown';
    const status = str(envelope.status) ?? 'unknown';
    const verdict = str(envelope.verdict) ?? null;
    const checkTitle = CHECK_TITLES[check] ?? check;
    const scriptPath = str(envelope.script);
    const scriptName = scriptPath ? baseName(scriptPath) : undefined;
    const { tone, headline } = verdictOf(check, status, verdict);

    const payload = isRecord(envelope.payload) ? envelope.payload : {};
    // A run that failed early has an empty or partial payload: show what it has, except facts
    // that would read as results (a "Loss: – → –" line helps nobody).
    const summary = str(envelope.summary) ?? '';
    const sections = SECTIONS[check]?.(payload, summary) ?? { facts: [], charts: [], tables: [] };
    const facts = status === 'completed' ? sections.facts : [];
    const duration = num(envelope.duration_s);
    if (duration !== undefined) {
        facts.push({ label: 'Duration', value: `${formatNumber(duration, 3)} s` });
    }

    const findings: Finding[] = arr(envelope.diagnostics)
        .filter(isRecord)
        .map((item) => ({
            code: str(item.code) ?? '',
            name: str(item.name) ?? '',
            severity: str(item.severity) ?? 'warning',
            message: str(item.message) ?? '',
            location: location(item.filename ?? scriptPath, item.line),
        }))
        .map((finding, index) => ({ finding, index }))
        .sort(
            (a, b) =>
                rankOf(SEVERITY_ORDER, a.finding.severity) - rankOf(SEVERITY_ORDER, b.finding.severity) ||
                a.index - b.index,
        )
        .map(({ finding }) => finding);

    let error: ErrorInfo | undefined;
    if (isRecord(envelope.error)) {
        error = {
            kind: str(envelope.error.kind) ?? 'error',
            message: str(envelope.error.message) ?? '',
            location: siteLocation(envelope.error.site),
            outputTail: arr(envelope.error.output_tail).filter((line): line is string => typeof line === 'string'),
        };
    }

    const earlier = historySections(history, checkTitle);
    return {
        title: `torchlint: ${checkTitle}${scriptName ? ` (${scriptName})` : ''}`,
        check,
        checkTitle,
        status,
        verdict,
        tone,
        headline: check === 'grads' && verdict === 'problems' ? gradsHeadline(payload, findings) : headline,
        summary,
        script: scriptPath ? { file: scriptPath, line: 1 } : undefined,
        scriptName,
        facts,
        charts: [...sections.charts, ...earlier.charts].filter(
            (chart) => chart.kind === 'bar' || chart.series.some((s) => s.points.length > 0),
        ),
        tables: [...sections.tables, ...earlier.tables],
        rerun: scriptPath !== undefined && RERUNNABLE.includes(check),
        findings,
        error,
    };
}

/** The checks the editor starts (its lenses), so a report can start them again. */
const RERUNNABLE = ['overfit', 'grads', 'profile'];

const HISTORY_COLORS: SeriesColor[] = ['blue', 'orange', 'green', 'purple', 'yellow'];

function when(at: number): string {
    const date = new Date(at);
    const pad = (value: number): string => String(value).padStart(2, '0');
    return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
}

/**
 * The last runs of the same check on the same script (this one first): their loss curves on one
 * chart, so a fix shows as a curve that falls where the one before did not, and a table of
 * their verdicts. Nothing when this is the first run.
 */
export function historySections(history: RunRecord[], checkTitle: string): Sections {
    if (history.length < 2) {
        return { facts: [], charts: [], tables: [] };
    }
    const charts: Chart[] = [];
    const curves = history.filter((record) => record.losses.length > 1);
    if (curves.length > 1) {
        const series: Series[] = curves.map((record, index) => ({
            label: `${index === 0 ? 'this run' : when(record.at)} (${record.verdict ?? record.status})`,
            points: points(record.losses),
            color: HISTORY_COLORS[index % HISTORY_COLORS.length],
        }));
        charts.push({
            kind: 'line',
            title: `Loss of the last ${curves.length} runs of ${checkTitle}`,
            xLabel: 'step',
            yLabel: 'loss',
            xLog: false,
            yLog: wantsLog(series),
            xIntegers: true,
            series,
        });
    }
    const tables: Table[] = [
        {
            title: 'The last runs',
            columns: ['When', 'Verdict', 'Summary'],
            rows: history.map((record, index) => [
                { text: index === 0 ? `${when(record.at)} (this run)` : when(record.at) },
                { text: record.verdict ?? record.status, tone: VERDICT_TONES[record.verdict ?? ''] ?? 'neutral' },
                { text: record.summary },
            ]),
        },
    ];
    return { facts: [], charts, tables };
}

const VERDICT_TONES: Record<string, Tone> = {
    pass: 'good',
    healthy: 'good',
    ok: 'good',
    suggested: 'good',
    fail: 'bad',
    nan: 'bad',
    problems: 'bad',
    overfitting: 'bad',
    underfitting: 'bad',
    hints: 'warning',
};

/**
 * The gradient scan's headline, in the terms of its tables: how many parameters have a wrong
 * gradient, or, when every row says ok, what else the run found (gradients never cleared, a
 * layer outside the optimizer...), never "some gradients are wrong" over a table of ok rows.
 */
export function gradsHeadline(payload: Json, findings: Finding[]): string {
    const params = arr(payload.params).filter(isRecord);
    const wrong = params.filter((param) => !['ok', 'frozen', 'not_scanned'].includes(str(param.status) ?? 'ok'));
    if (wrong.length > 0) {
        const which = wrong.length === 1 ? `${str(wrong[0].name) ?? 'a parameter'} has` : `${wrong.length} of ${params.length} parameters have`;
        return `Problems: ${which} a wrong gradient`;
    }
    const serious = findings.filter((finding) => finding.severity === 'error' || finding.severity === 'warning');
    const first = serious[0];
    if (first) {
        const what = first.name ? first.name.replace(/-/g, ' ') : first.message;
        const more = serious.length > 1 ? ` (and ${serious.length - 1} more)` : '';
        const rows = params.length > 0 ? '; every parameter\'s gradient looks right' : '';
        return `Problems: ${what}${more}${rows}`;
    }
    return 'Problems: see the findings below';
}

function rankOf(order: string[], value: string): number {
    const index = order.indexOf(value);
    return index === -1 ? order.length : index;
}
