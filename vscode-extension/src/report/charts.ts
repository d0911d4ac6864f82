/**
 * Chart specs of the report model as chart.js configurations. Pure (chart.js is imported for its
 * types only), so the tests check the configurations without a canvas; the webview script passes
 * the result to `new Chart(canvas, config)`.
 */

import type { ChartConfiguration } from 'chart.js';
import type { BarChart, Chart, LineChart, SeriesColor } from './model';

/** The id of the JSON block (in the report's HTML) the webview script reads the charts from. */
export const DATA_ELEMENT_ID = 'torchlint-report-data';

/** Colours from the VS Code theme (CSS variables), read by the webview script. */
export interface Theme {
    foreground: string;
    muted: string;
    grid: string;
    colors: Record<SeriesColor, string>;
}

/** Used when the theme does not define the variables (and in tests). */
export const DEFAULT_THEME: Theme = {
    foreground: '#cccccc',
    muted: '#8b949e',
    grid: 'rgba(128, 128, 128, 0.25)',
    colors: {
        blue: '#3794ff',
        orange: '#d18616',
        green: '#89d185',
        red: '#f14c4c',
        purple: '#b180d7',
        yellow: '#cca700',
        muted: '#8b949e',
    },
};

/** The CSS variables VS Code sets in webviews for chart colours. */
export const THEME_VARIABLES: Record<SeriesColor, string> = {
    blue: '--vscode-charts-blue',
    orange: '--vscode-charts-orange',
    green: '--vscode-charts-green',
    red: '--vscode-charts-red',
    purple: '--vscode-charts-purple',
    yellow: '--vscode-charts-yellow',
    muted: '--vscode-descriptionForeground',
};

function axisTitle(text: string, theme: Theme) {
    return { display: true, text, color: theme.muted };
}

/** Log axis labels at the powers of ten only ("1e-4"), the ticks between them unlabelled. */
export function decadeLabel(value: number | string): string {
    const number = Number(value);
    if (!(number > 0)) {
        return '';
    }
    const exponent = Math.log10(number);
    const rounded = Math.round(exponent);
    if (Math.abs(exponent - rounded) > 1e-9) {
        return '';
    }
    return rounded >= 0 && rounded <= 3 ? String(10 ** rounded) : `1e${rounded}`;
}

function lineConfig(chart: LineChart, theme: Theme): ChartConfiguration<'line', Array<{ x: number; y: number | null }>> {
    return {
        type: 'line',
        data: {
            datasets: chart.series.map((series) => {
                const color = theme.colors[series.color];
                return {
                    label: series.label,
                    data: series.points.map(([x, y]) => ({ x, y })),
                    borderColor: color,
                    backgroundColor: color,
                    borderWidth: series.markers ? 0 : 2,
                    borderDash: series.dashed ? [6, 4] : undefined,
                    showLine: !series.markers,
                    pointRadius: series.markers ? 6 : series.dashed || series.points.length > 60 ? 0 : 2,
                    pointHoverRadius: series.markers ? 8 : 4,
                    pointStyle: series.markers ? 'rectRot' : 'circle',
                    spanGaps: false,
                    tension: 0,
                };
            }),
        },
        options: {
            responsive: true,
            maintainAspectRatio: false,
            animation: false,
            parsing: false,
            normalized: true,
            interaction: { mode: 'nearest', intersect: false },
            color: theme.foreground,
            plugins: {
                legend: { labels: { color: theme.foreground, boxHeight: 2 } },
                tooltip: { enabled: true },
            },
            scales: {
                x: {
                    type: chart.xLog ? 'logarithmic' : 'linear',
                    title: axisTitle(chart.xLabel, theme),
                    ticks: {
                        color: theme.muted,
                        ...(chart.xIntegers ? { precision: 0 } : {}),
                        ...(chart.xLog ? { callback: decadeLabel, autoSkip: false, maxRotation: 0 } : {}),
                    },
                    grid: { color: theme.grid },
                },
                y: {
                    type: chart.yLog ? 'logarithmic' : 'linear',
                    max: chart.yMax,
                    title: axisTitle(chart.yLabel, theme),
                    ticks: { color: theme.muted, includeBounds: chart.yMax === undefined },
                    grid: { color: theme.grid },
                },
            },
        },
    };
}

function barConfig(chart: BarChart, theme: Theme): ChartConfiguration<'bar', number[], string> {
    return {
        type: 'bar',
        data: {
            labels: chart.labels,
            datasets: [
                {
                    label: chart.valueLabel,
                    data: chart.values,
                    backgroundColor: theme.colors.blue,
                    borderColor: theme.colors.blue,
                },
            ],
        },
        options: {
            indexAxis: 'y',
            responsive: true,
            maintainAspectRatio: false,
            animation: false,
            color: theme.foreground,
            plugins: {
                legend: { display: false },
                tooltip: { enabled: true },
            },
            scales: {
                x: {
                    type: 'linear',
                    min: 0,
                    suggestedMax: 100,
                    title: axisTitle(chart.valueLabel, theme),
                    ticks: { color: theme.muted },
                    grid: { color: theme.grid },
                },
                y: {
                    type: 'category',
                    ticks: { color: theme.foreground },
                    grid: { display: false },
                },
            },
        },
    };
}

/** The chart.js configuration of a chart spec. */
export function chartConfig(chart: Chart, theme: Theme = DEFAULT_THEME): ChartConfiguration {
    return (chart.kind === 'line' ? lineConfig(chart, theme) : barConfig(chart, theme)) as ChartConfiguration;
}
