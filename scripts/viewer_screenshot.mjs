// viewer_screenshot.mjs - a PNG of a page of `mbsens view` in headless
// Chromium (the browser setup of tests/browser/browser.mjs), at a frame.
//   node scripts/viewer_screenshot.mjs PAGE.html OUT.png [FRAME] [TAB]
// TAB: plots (default), sens or info: the side panel to show.
import { launch, open } from '../tests/browser/browser.mjs';
import { resolve } from 'node:path';

const [file, out, frame = '0', tab = 'plots'] = process.argv.slice(2);
if (!file || !out) {
  console.error('usage: node scripts/viewer_screenshot.mjs PAGE.html OUT.png [FRAME] [TAB]');
  process.exit(2);
}
const ctx = await launch();
const { page, errors } = await open(ctx, resolve(file));
await page.click(`#tabs [data-tab="${tab}"]`);
await page.evaluate((k) => window.mbsViewer.seek(k), Number(frame));
await page.waitForTimeout(800);
await page.screenshot({ path: out });
await ctx.close();
ctx.cleanup();
if (errors.length) {
  console.error('console errors:', errors);
  process.exit(1);
}
