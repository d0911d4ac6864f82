// Bundles the extension (Node, `vscode` external) and the report webview's script (browser, with
// chart.js) into dist/; with --tests, the unit tests into out/test/ for `node --test`.
//   node esbuild.mjs           production build (minified, no source maps)
//   node esbuild.mjs --watch   rebuild on change, with source maps
//   node esbuild.mjs --tests   bundle src/test/*.test.ts into out/test/
import * as esbuild from 'esbuild';
import { readdirSync, rmSync } from 'node:fs';

const watch = process.argv.includes('--watch');
const tests = process.argv.includes('--tests');

/** @type {esbuild.BuildOptions} */
const common = {
  bundle: true,
  logLevel: 'warning',
  legalComments: 'none',
  minify: !watch && !tests,
  sourcemap: watch ? 'linked' : false,
};

/** @type {esbuild.BuildOptions[]} */
const builds = tests
  ? [
      {
        ...common,
        entryPoints: readdirSync('src/test')
          .filter((name) => name.endsWith('.test.ts'))
          .map((name) => `src/test/${name}`),
        outdir: 'out/test',
        platform: 'node',
        format: 'cjs',
        target: 'node20',
        // The tests cover the modules that do not need VS Code; importing it is a mistake.
        external: ['vscode'],
      },
    ]
  : [
      {
        ...common,
        entryPoints: ['src/extension.ts'],
        outfile: 'dist/extension.js',
        platform: 'node',
        format: 'cjs',
        target: 'node18',
        external: ['vscode'],
      },
      {
        ...common,
        entryPoints: ['src/report/webview.ts'],
        outfile: 'dist/webview.js',
        platform: 'browser',
        format: 'iife',
        target: 'es2020',
      },
    ];

rmSync(tests ? 'out' : 'dist', { recursive: true, force: true });
if (watch) {
  for (const options of builds) {
    const context = await esbuild.context(options);
    await context.watch();
  }
  console.log('esbuild: watching src/ (Ctrl+C to stop)');
} else {
  await Promise.all(builds.map((options) => esbuild.build(options)));
}
