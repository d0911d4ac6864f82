/**
 * The report webview's script (bundled with chart.js into dist/webview.js): draws the charts from
 * the page's JSON block and turns the location links into "open this file at this line" messages
 * to the extension.
 */

import {
    BarController,
    BarElement,
    CategoryScale,
    Chart,
    Legend,
    LinearScale,
    LineController,
    LineElement,
    LogarithmicScale,
    PointElement,
    Tooltip,
} from 'chart.js';
import { chartConfig, DATA_ELEMENT_ID, DEFAULT_THEME, Theme, THEME_VARIABLES } from './charts';
import type { Chart as ChartSpec, SeriesColor } from './model';

declare function acquireVsCodeApi(): { postMessage(message: unknown): void };

Chart.register(
    LineController,
    LineElement,
    PointElement,
    BarController,
    BarElement,
    LinearScale,
    LogarithmicScale,
    CategoryScale,
    Legend,
    Tooltip,
);

const vscode = acquireVsCodeApi();

function cssVariable(name: string): string | undefined {
    const value = getComputedStyle(document.body).getPropertyValue(name).trim();
    return value === '' ? undefined : value;
}

function readTheme(): Theme {
    const colors = { ...DEFAULT_THEME.colors };
    for (const [color, variable] of Object.entries(THEME_VARIABLES) as Array<[SeriesColor, string]>) {
        colors[color] = cssVariable(variable) ?? colors[color];
    }
    return {
        foreground: cssVariable('--vscode-foreground') ?? DEFAULT_THEME.foreground,
        muted: cssVariable('--vscode-descriptionForeground') ?? DEFAULT_THEME.muted,
        grid: cssVariable('--vscode-editorWidget-border') ?? DEFAULT_THEME.grid,
        colors,
    };
}

function drawCharts(): void {
    const element = document.getElementById(DATA_ELEMENT_ID);
    if (!element?.textContent) {
        return;
    }
    const data = JSON.parse(element.textContent) as { charts?: ChartSpec[] };
    const theme = readTheme();
    (data.charts ?? []).forEach((spec, index) => {
        const canvas = document.getElementById(`chart-${index}`);
        if (canvas instanceof HTMLCanvasElement) {
            new Chart(canvas, chartConfig(spec, theme));
        }
    });
}

document.addEventListener('click', (event) => {
    if (event.target instanceof Element && event.target.closest('#rerun')) {
        vscode.postMessage({ type: 'rerun' });
        return;
    }
    const target = event.target instanceof Element ? event.target.closest('a.jump') : null;
    if (!(target instanceof HTMLAnchorElement)) {
        return;
    }
    event.preventDefault();
    const file = target.dataset.file;
    const line = Number(target.dataset.line);
    if (file && Number.isInteger(line) && line >= 1) {
        vscode.postMessage({ type: 'open', file, line });
    }
});

drawCharts();
