// viewer_fps.mjs - frame rate of a page of `mbsens view` playing its run in
// headless Chromium (software WebGL, SwiftShader), measured by the page's
// own frame counter (mbsViewer.stats.framesDrawn, counted where the scene
// is drawn) over a wall-clock window of playback at 1x speed.
//
//   node bench/viewer_fps.mjs PAGE.html [SECONDS] [WIDTHxHEIGHT]
// prints the frames drawn, the seconds, the frames per second, the run
// time covered and the page's own last one-second figure; and the CPU time
// that Chromium's processes (all of them: page, GPU process with
// SwiftShader, compositor) spent per frame drawn, which does not depend on
// what else the machine runs: 1000 / (ms per frame) x cores bounds the
// frame rate of an otherwise idle machine.
import { readdirSync, readFileSync } from 'node:fs';
import { launch, open } from '../tests/browser/browser.mjs';

// CPU seconds (user + system) of the processes whose command line names `tag`
function cpuSeconds(tag) {
  let ticks = 0;
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      if (!readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(tag)) continue;
      const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
      ticks += Number(f[11]) + Number(f[12]);
    } catch { /* the process ended */ }
  }
  return ticks / 100;
}

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
let cpu0 = 0, cpu1 = 0;
await page.exposeFunction('cpuMark2', () => { cpu1 = cpuSeconds(ctx.profile); });
await page.exposeFunction('cpuMark', () => { cpu0 = cpuSeconds(ctx.profile); });
const r = await page.evaluate(async (ms) => {
  const v = window.mbsViewer;
  v.setSpeed(1);
  v.seek(0);
  v.play();
  await new Promise((res) => setTimeout(res, 500));   // past the first frames
  await window.cpuMark();
  const f0 = v.stats.framesDrawn, t0 = performance.now(), s0 = v.time();
  await new Promise((res) => setTimeout(res, ms));
  const f1 = v.stats.framesDrawn, t1 = performance.now(), s1 = v.time();
  await window.cpuMark2();
  v.pause();
  return { frames: f1 - f0, seconds: (t1 - t0) / 1000, run: s1 - s0, last: v.stats.fps, total: v.frames };
}, Number(secs) * 1000);
console.log(`${file}: ${r.total} stored frames, viewport ${w}x${h}`);
console.log(`  ${r.frames} frames drawn in ${r.seconds.toFixed(2)} s: ${(r.frames / r.seconds).toFixed(1)} fps ` +
  `(run time covered ${r.run.toFixed(2)} s; last one-second window ${r.last.toFixed(1)} fps)`);
console.log(`  CPU of Chromium: ${(cpu1 - cpu0).toFixed(2)} s, ${(1000 * (cpu1 - cpu0) / r.frames).toFixed(1)} ms per ` +
  `frame drawn; load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`);
if (errors.length) console.log('  console errors:', errors);
await ctx.close();
ctx.cleanup();
