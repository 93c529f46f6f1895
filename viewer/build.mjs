// build.mjs - bundle the page of `mbsens view` into dist/viewer.html:
// src/template.html with the CSS (ours and uPlot's) and the JavaScript
// (src/main.js with three.js and uPlot, bundled and minified by esbuild)
// inlined. `mbsens view` replaces @MBS_DATA@ with the model and the run.
// The output is committed; the C build embeds it (cmake/embed_file.c).
import { build } from 'esbuild';
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';

const here = new URL('.', import.meta.url).pathname;
const result = await build({
  entryPoints: [here + 'src/main.js'],
  bundle: true,
  minify: true,
  format: 'iife',
  target: ['es2020'],
  legalComments: 'none',
  write: false,
  outdir: here + 'dist',
  loader: { '.css': 'css' },
  logLevel: 'warning',
});
const out = (ext) => result.outputFiles.find((f) => f.path.endsWith(ext)).text;
// "</script" must not appear inside the inline script: in JavaScript
// "<\/script" reads the same in strings and regular expressions
const js = out('.js').replace(/<\/script/gi, '<\\/script');
const css = readFileSync(here + 'src/style.css', 'utf8') + out('.css');
const template = readFileSync(here + 'src/template.html', 'utf8');
if (!template.includes('@MBS_DATA@')) throw new Error('template without @MBS_DATA@');
const page = template.replace('/*@CSS@*/', () => css).replace('/*@JS@*/', () => js);
if (page.split('@MBS_DATA@').length !== 2) throw new Error('@MBS_DATA@ must occur exactly once in the page');
// --out FILE: write there instead (tests/browser/run.sh compares it with dist/)
const at = process.argv.indexOf('--out');
const target = at > 0 ? process.argv[at + 1] : here + 'dist/viewer.html';
if (at < 0) mkdirSync(here + 'dist', { recursive: true });
writeFileSync(target, page);
console.log(`${target}: ${page.length} bytes`);
