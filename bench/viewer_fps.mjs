// viewer_fps.mjs - frame rate of a page of `mbsens view` playing its run in
// headless Chromium (software WebGL, SwiftShader), measured by the page's
// own frame counter (mbsViewer.stats.framesDrawn, counted where the scene
// is drawn) over a wall-clock window of playback at 1x speed.
//
//   node bench/viewer_fps.mjs PAGE.html [SECONDS] [WIDTHxHEIGHT]
// prints the frames drawn, the seconds, the frames per second, the run
// time covered and the page's own last one-second figure.
import { launch, open } from '../tests/browser/browser.mjs';

const [file, secs = '10', size = '1280x760'] = process.argv.slice(2);
if (!file) {
  console.error('usage: node bench/viewer_fps.mjs PAGE.html [SECONDS] [WIDTHxHEIGHT]');
  process.exit(2);
}
const [w, h] = size.split('x').map(Number);
const ctx = await launch();
const { page, errors } = await open(ctx, file.startsWith('/') ? file : process.cwd() + '/' + file);
await page.setViewportSize({ width: w, height: h });
await page.waitForTimeout(1000);
const r = await page.evaluate(async (ms) => {
  const v = window.mbsViewer;
  v.setSpeed(1);
  v.seek(0);
  v.play();
  await new Promise((res) => setTimeout(res, 500));   // past the first frames
  const f0 = v.stats.framesDrawn, t0 = performance.now(), s0 = v.time();
  await new Promise((res) => setTimeout(res, ms));
  const f1 = v.stats.framesDrawn, t1 = performance.now(), s1 = v.time();
  v.pause();
  return { frames: f1 - f0, seconds: (t1 - t0) / 1000, run: s1 - s0, last: v.stats.fps, total: v.frames };
}, Number(secs) * 1000);
console.log(`${file}: ${r.total} stored frames, viewport ${w}x${h}`);
console.log(`  ${r.frames} frames drawn in ${r.seconds.toFixed(2)} s: ${(r.frames / r.seconds).toFixed(1)} fps ` +
  `(run time covered ${r.run.toFixed(2)} s; last one-second window ${r.last.toFixed(1)} fps)`);
if (errors.length) console.log('  console errors:', errors);
await ctx.close();
ctx.cleanup();
