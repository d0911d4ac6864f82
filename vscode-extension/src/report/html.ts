/**
 * The report webview's HTML for a `ReportModel`. Pure (string building, no `vscode`), so the
 * unit tests render fixtures and check the result.
 *
 * Security: every value from the envelope is HTML-escaped; the chart data travels as JSON in a
 * `<script type="application/json">` block (never executed, `<` escaped); the only script is
 * the bundled `dist/webview.js`, allowed by its nonce; no inline event handlers or style
 * attributes, so the CSP needs neither `unsafe-inline` nor `unsafe-eval`.
 */

import { DATA_ELEMENT_ID } from './charts';
import { baseName, Cell, Chart, Fact, Finding, Location, ReportModel, Table } from './model';

export interface RenderOptions {
    /** `webview.cspSource`. */
    cspSource: string;
    /** A fresh random string per render. */
    nonce: string;
    /** `webview.asWebviewUri(dist/webview.js)`, as a string. */
    scriptUri: string;
}

export function escapeHtml(text: string): string {
    return text
        .replace(/&/g, '&amp;')
        .replace(/</g, '&lt;')
        .replace(/>/g, '&gt;')
        .replace(/"/g, '&quot;')
        .replace(/'/g, '&#39;');
}

/** JSON safe inside a `<script>` element: no `</script>`, no `<!--`. */
export function scriptJson(value: unknown): string {
    return JSON.stringify(value)
        .replace(/</g, '\\u003c')
        .replace(/>/g, '\\u003e')
        .replace(/&/g, '\\u0026')
        .replace(/\u2028/g, '\\u2028')
        .replace(/\u2029/g, '\\u2029');
}

export function contentSecurityPolicy(options: Pick<RenderOptions, 'cspSource' | 'nonce'>): string {
    return [
        "default-src 'none'",
        `img-src ${options.cspSource} data:`,
        `style-src ${options.cspSource} 'nonce-${options.nonce}'`,
        `script-src 'nonce-${options.nonce}'`,
        `font-src ${options.cspSource}`,
    ].join('; ');
}

/** A link that the webview script turns into "open this file at this line". */
export function jumpLink(where: Location, text?: string): string {
    const label = text ?? `${baseName(where.file)}:${where.line}`;
    return (
        `<a href="#" class="jump" data-file="${escapeHtml(where.file)}" data-line="${where.line}" ` +
        `title="${escapeHtml(`${where.file}:${where.line}`)}">${escapeHtml(label)}</a>`
    );
}

function renderFacts(facts: Fact[]): string {
    if (facts.length === 0) {
        return '';
    }
    const rows = facts
        .map((fact) => `<dt>${escapeHtml(fact.label)}</dt><dd>${escapeHtml(fact.value)}</dd>`)
        .join('');
    return `<section class="facts"><dl>${rows}</dl></section>`;
}

function renderFindings(findings: Finding[]): string {
    if (findings.length === 0) {
        return '';
    }
    const items = findings
        .map((finding) => {
            const where = finding.location ? ` ${jumpLink(finding.location)}` : '';
            const code = finding.code ? `<span class="code">${escapeHtml(finding.code)}</span> ` : '';
            return (
                `<li class="finding severity-${escapeHtml(finding.severity)}">` +
                `<span class="severity">${escapeHtml(finding.severity)}</span> ${code}` +
                `<span class="message">${escapeHtml(finding.message)}</span>${where}</li>`
            );
        })
        .join('');
    return `<section class="findings"><h2>Findings (${findings.length})</h2><ul>${items}</ul></section>`;
}

function renderCharts(charts: Chart[]): string {
    if (charts.length === 0) {
        return '';
    }
    const figures = charts
        .map(
            (chart, index) =>
                `<figure class="chart chart-${chart.kind}"><figcaption>${escapeHtml(chart.title)}</figcaption>` +
                `<div class="chart-box"><canvas id="chart-${index}" data-chart="${index}" role="img" ` +
                `aria-label="${escapeHtml(chart.title)}"></canvas></div></figure>`,
        )
        .join('');
    return `<section class="charts">${figures}</section>`;
}

function renderCell(cell: Cell): string {
    const classes = [cell.numeric ? 'numeric' : '', cell.tone ? `tone-${cell.tone}` : ''].filter(Boolean).join(' ');
    const content = cell.link ? jumpLink(cell.link, cell.text) : escapeHtml(cell.text);
    return `<td${classes ? ` class="${classes}"` : ''}>${content}</td>`;
}

function renderTable(table: Table): string {
    const head = table.columns
        .map((column, index) => {
            const numeric = table.rows[0]?.[index]?.numeric ? ' class="numeric"' : '';
            return `<th${numeric}>${escapeHtml(column)}</th>`;
        })
        .join('');
    const body = table.rows.map((row) => `<tr>${row.map(renderCell).join('')}</tr>`).join('');
    const note = table.note ? `<p class="note">${escapeHtml(table.note)}</p>` : '';
    return (
        `<section class="table"><h2>${escapeHtml(table.title)}</h2>` +
        `<table><thead><tr>${head}</tr></thead><tbody>${body}</tbody></table>${note}</section>`
    );
}

function renderError(model: ReportModel): string {
    const error = model.error;
    if (!error) {
        return '';
    }
    const where = error.location ? `<p>At ${jumpLink(error.location)}</p>` : '';
    const tail =
        error.outputTail.length > 0
            ? `<details open><summary>Last output of the script</summary><pre>${escapeHtml(error.outputTail.join('\n'))}</pre></details>`
            : '';
    return (
        `<section class="error"><h2>Error: ${escapeHtml(error.kind)}</h2>` +
        `<p>${escapeHtml(error.message)}</p>${where}${tail}</section>`
    );
}

const STYLE = `
body { font-family: var(--vscode-font-family); font-size: var(--vscode-font-size); color: var(--vscode-foreground);
  padding: 0 20px 24px; line-height: 1.45; }
h1 { font-size: 1.6em; margin: 4px 0 6px; }
h2 { font-size: 1.15em; margin: 22px 0 8px; }
a { color: var(--vscode-textLink-foreground); text-decoration: none; }
a:hover { text-decoration: underline; }
a:focus { outline: 1px solid var(--vscode-focusBorder); }
.verdict { border-left: 6px solid var(--vscode-charts-foreground, #888); padding: 10px 16px; margin: 16px 0;
  background: var(--vscode-editorWidget-background); }
.verdict.tone-good { border-left-color: var(--vscode-charts-green, #3fb950); }
.verdict.tone-warning { border-left-color: var(--vscode-charts-yellow, #d29922); }
.verdict.tone-bad { border-left-color: var(--vscode-charts-red, #f85149); }
.check { color: var(--vscode-descriptionForeground); }
button.rerun { margin-left: 1em; color: var(--vscode-button-foreground); background: var(--vscode-button-background); border: none; padding: 2px 10px; cursor: pointer; }
button.rerun:hover { background: var(--vscode-button-hoverBackground); }
.summary { margin: 4px 0; }
.facts dl { display: grid; grid-template-columns: max-content 1fr; gap: 4px 16px; margin: 0; }
.facts dt { color: var(--vscode-descriptionForeground); }
.facts dd { margin: 0; }
.charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(420px, 1fr)); gap: 16px; margin-top: 16px; }
.chart { margin: 0; }
.chart figcaption { font-weight: 600; margin-bottom: 6px; }
.chart-box { position: relative; height: 300px; }
ul { padding-left: 0; list-style: none; }
.finding { margin: 6px 0; }
.severity { display: inline-block; min-width: 4.5em; font-weight: 600; text-transform: uppercase; font-size: 0.85em; }
.severity-error .severity { color: var(--vscode-errorForeground, #f85149); }
.severity-warning .severity { color: var(--vscode-editorWarning-foreground, #d29922); }
.severity-info .severity { color: var(--vscode-editorInfo-foreground, #3794ff); }
.code { font-family: var(--vscode-editor-font-family); color: var(--vscode-descriptionForeground); }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 4px 10px; border-bottom: 1px solid var(--vscode-editorWidget-border, #8884); }
th { color: var(--vscode-descriptionForeground); font-weight: 600; }
th.numeric { text-align: right; }
td.numeric { text-align: right; font-variant-numeric: tabular-nums; font-family: var(--vscode-editor-font-family); }
td.tone-bad { color: var(--vscode-errorForeground, #f85149); font-weight: 600; }
td.tone-warning { color: var(--vscode-editorWarning-foreground, #d29922); }
td.tone-good { color: var(--vscode-charts-green, #3fb950); }
.note { color: var(--vscode-descriptionForeground); font-size: 0.9em; }
pre { background: var(--vscode-textCodeBlock-background); padding: 8px; white-space: pre-wrap; overflow-wrap: anywhere;
  font-family: var(--vscode-editor-font-family); font-size: var(--vscode-editor-font-size); }
`;

/** The whole document of the report webview. */
export function renderReportHtml(model: ReportModel, options: RenderOptions): string {
    const nonce = escapeHtml(options.nonce);
    const script = model.script ? ` · ${jumpLink(model.script, model.scriptName)}` : '';
    const data = scriptJson({ charts: model.charts });
    return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${escapeHtml(contentSecurityPolicy(options))}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<title>${escapeHtml(model.title)}</title>
<style nonce="${nonce}">${STYLE}</style>
</head>
<body data-check="${escapeHtml(model.check)}" data-status="${escapeHtml(model.status)}" data-verdict="${escapeHtml(model.verdict ?? '')}">
<header class="verdict tone-${model.tone}">
<div class="check">${escapeHtml(model.checkTitle)}${script}${
        model.rerun ? ' <button class="rerun" id="rerun" type="button">Run again</button>' : ''
    }</div>
<h1 class="headline">${escapeHtml(model.headline)}</h1>
<p class="summary">${escapeHtml(model.summary)}</p>
</header>
${renderFacts(model.facts)}
${renderFindings(model.findings)}
${renderCharts(model.charts)}
${model.tables.map(renderTable).join('\n')}
${renderError(model)}
<script type="application/json" id="${DATA_ELEMENT_ID}">${data}</script>
<script nonce="${nonce}" src="${escapeHtml(options.scriptUri)}"></script>
</body>
</html>
`;
}
