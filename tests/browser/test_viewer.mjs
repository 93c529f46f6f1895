// test_viewer.mjs - the pages of `mbsens view` in headless Chromium
// (tests/browser/run.sh runs it: node --test). For the five-bar (closed
// loop, springs, sensitivity table), human43 (43 bodies) and a URDF robot
// of our own (tests/urdf/viewer_arm.urdf: every shape kind, a mesh found, a
// mesh missing):
//   - no console errors and no network request;
//   - the WebGL canvas is not blank at t = 0;
//   - two frames at different times differ;
//   - the slider moves the model: the page's body poses at the slider's
//     frame are the CSV's (simulate --poses) to Float32 rounding;
//   - the plots show the trajectory: values read back from the plots'
//     data equal the CSV's columns rounded to Float32.
// Tolerances: the page stores Float32; a value plotted is the CSV value
// rounded to Float32 exactly (Math.fround). Body positions likewise; the
// quaternion is renormalized in double after the rounding: 2^-23 per
// component bounds that.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { launch, open } from './browser.mjs';

const SRC = process.env.MBS_SOURCE_DIR || new URL('../..', import.meta.url).pathname;
const CLI = process.env.MBS_CLI;
if (!CLI) throw new Error('MBS_CLI is not set (the mbsens program)');
const dir = mkdtempSync(join(tmpdir(), 'mbs-view-'));
let browser;

function mbsens(...args) {
  return execFileSync(CLI, args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] }).toString();
}

function readCsv(path) {
  const lines = readFileSync(path, 'utf8').trim().split('\n');
  const head = lines[0].split(',');
  const rows = lines.slice(1).map((l) => l.split(',').map(Number));
  return { head, rows, col: (name) => head.indexOf(name) };
}

// a screenshot of the 3D view, decoded by the page's own 2D canvas and
// kept there as snapshot `key`; returns the fraction of its pixels away
// from the background colour #eef0f4
async function snapshot(page, key) {
  const png = await page.locator('#view3d canvas').screenshot();
  return page.evaluate(async ([b64, k]) => {
    const img = new Image();
    img.src = 'data:image/png;base64,' + b64;
    await img.decode();
    const c = document.createElement('canvas');
    c.width = img.width;
    c.height = img.height;
    const g = c.getContext('2d');
    g.drawImage(img, 0, 0);
    const px = g.getImageData(0, 0, c.width, c.height).data;
    (window.snapshots ||= {})[k] = px;
    let n = 0;
    for (let i = 0; i < px.length; i += 4)
      if (Math.abs(px[i] - 0xee) + Math.abs(px[i + 1] - 0xf0) + Math.abs(px[i + 2] - 0xf4) > 24) n++;
    return n / (px.length / 4);
  }, [png.toString('base64'), key]);
}

// fraction of the pixels that differ between two snapshots
function differing(page, a, b) {
  return page.evaluate(([ka, kb]) => {
    const x = window.snapshots[ka], y = window.snapshots[kb];
    let n = 0;
    for (let i = 0; i < x.length; i += 4)
      if (Math.abs(x[i] - y[i]) + Math.abs(x[i + 1] - y[i + 1]) + Math.abs(x[i + 2] - y[i + 2]) > 24) n++;
    return n / (x.length / 4);
  }, [a, b]);
}

async function settle(page) {
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
}

// the checks every page gets; `body` is a body whose pose the CSV carries
async function checkPage(name, csvFile, htmlFile, body, series) {
  const csv = readCsv(join(dir, csvFile));
  const { page, errors } = await open(browser, join(dir, htmlFile));
  const n = await page.evaluate(() => window.mbsViewer.frames);
  assert.equal(n, csv.rows.length, `${name}: frames`);

  await page.locator('#follow').uncheck();   // a fixed camera: what moves is the model
  await page.evaluate(() => window.mbsViewer.seek(0));
  await settle(page);
  const f0 = await snapshot(page, 'first');
  assert.ok(f0 > 0.01, `${name}: canvas blank at t = 0 (${(100 * f0).toFixed(2)}% drawn)`);

  const k = Math.floor((2 * n) / 3);
  const slider = page.locator('#slider');
  await slider.fill(String(k));
  await settle(page);
  await snapshot(page, 'slider');
  const moved = await differing(page, 'first', 'slider');
  assert.ok(moved > 0.002, `${name}: frames 0 and ${k} look the same (${(100 * moved).toFixed(3)}% differ)`);
  assert.equal(await page.evaluate(() => window.mbsViewer.frame()), k, `${name}: slider frame`);

  // the slider moved the model to the CSV's pose of that row
  const row = csv.rows[k];
  const pos = await page.evaluate((b) => window.mbsViewer.bodyPosition(b), body);
  const quat = await page.evaluate((b) => window.mbsViewer.bodyQuaternion(b), body);
  ['x', 'y', 'z'].forEach((c, i) => assert.equal(pos[i], Math.fround(row[csv.col(`${body}.${c}`)]),
    `${name}: ${body}.${c} at row ${k}`));
  ['qw', 'qx', 'qy', 'qz'].forEach((c, i) => {
    const want = row[csv.col(`${body}.${c}`)];
    assert.ok(Math.abs(quat[i] - want) <= 2 ** -23, `${name}: ${body}.${c} = ${quat[i]}, CSV ${want}`);
  });

  // the plots carry the CSV's values
  const groups = await page.evaluate(() => window.mbsViewer.plotGroups());
  assert.ok(groups.some((g) => g.group === 'coordinates'), `${name}: no coordinate plot`);
  for (const s of series) {
    assert.ok(csv.col(s) >= 0, `${name}: the CSV has no column ${s}`);
    for (const idx of [0, Math.floor(n / 3), k, n - 1]) {
      const v = await page.evaluate(([s1, i]) => window.mbsViewer.plotValue(s1, i), [s, idx]);
      assert.equal(v, Math.fround(csv.rows[idx][csv.col(s)]), `${name}: plot of ${s} at row ${idx}`);
    }
  }

  // playback advances the time
  await page.evaluate(() => { window.mbsViewer.seek(0); window.mbsViewer.play(); });
  await page.waitForTimeout(700);
  const t = await page.evaluate(() => { window.mbsViewer.pause(); return window.mbsViewer.time(); });
  assert.ok(t > 0, `${name}: playback did not advance`);

  assert.deepEqual(errors, [], `${name}: console errors`);
  return page;
}

before(async () => {
  browser = await launch();
});

after(async () => {
  await browser.close();
  browser.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

test('five-bar: loop, springs, trace, sensitivity table', async () => {
  const model = join(SRC, 'models/fivebar.json');
  mbsens('simulate', model, '--tf', '2', '--poses', 'all', '--out', 'fivebar.csv', '-q');
  const sens = mbsens('sensitivity', model, '--tf', '0.5', '--json');
  writeFileSync(join(dir, 'fivebar_sens.json'), sens);
  mbsens('view', model, 'fivebar.csv', '-o', 'fivebar.html', '--sensitivity', 'fivebar_sens.json',
    '--trace', 'b12.P2');
  const page = await checkPage('fivebar', 'fivebar.csv', 'fivebar.html', 'b23', ['jA', 'j1', 'j2', 'j3']);
  const groups = await page.evaluate(() => window.mbsViewer.plotGroups().map((g) => g.group));
  assert.deepEqual(groups, ['coordinates', 'energy', 'violation', 'objectives']);
  const traced = await page.$eval('#trace', (sel) => sel.options[sel.selectedIndex].textContent);
  assert.equal(traced, 'b12.P2', 'fivebar: --trace selects the point');
  // the gradient table holds the result's numbers
  const want = JSON.parse(sens);
  const cells = await page.$$eval('#sens table.grad td[data-value]', (td) => td.map((c) => Number(c.dataset.value)));
  assert.deepEqual(cells, want.gradient.flat());
  const bars = await page.$$eval('#sens .bars', (b) => b.map((x) => x.querySelectorAll('.bar').length));
  assert.deepEqual(bars, want.objectives.map(() => want.parameters.length));
  // hover: the name of what is under the pointer (at the screen position of body b12's origin)
  const at = await page.evaluate(() => window.mbsViewer.screenPosition('b12'));
  await page.mouse.move(at[0], at[1]);
  await page.waitForFunction(() => !document.getElementById('tooltip').hidden, null, { timeout: 10000 });
  const named = await page.evaluate(() => document.getElementById('tooltip').textContent);
  assert.match(named, /b12|joint j1/, `fivebar: hover shows '${named}'`);
  await page.close();
});

test('human43: 43 bodies', async () => {
  const model = join(SRC, 'models/human43.json');
  mbsens('simulate', model, '--tf', '1', '--poses', 'all', '--out', 'human43.csv', '-q');
  mbsens('view', model, 'human43.csv', '-o', 'human43.html');
  const page = await checkPage('human43', 'human43.csv', 'human43.html', 'r_thigh',
    ['q1_pelvis_tz', 'q4_pelvis_tilt', 'q22_trunk_bend']);
  await page.close();
});

test('URDF robot: shapes, a mesh, a missing mesh', async () => {
  const model = join(SRC, 'tests/urdf/viewer_arm.urdf');
  mbsens('simulate', model, '--tf', '1', '--poses', 'all', '--out', 'arm.csv', '-q');
  mbsens('view', model, 'arm.csv', '-o', 'arm.html');
  const page = await checkPage('viewer_arm', 'arm.csv', 'arm.html', 'fore', ['shoulder', 'elbow', 'slide', 'wrist']);
  const info = await page.$$eval('#info li', (li) => li.map((x) => x.textContent));
  assert.ok(info.some((l) => l.includes('hand.dae not found: drawn as its link\'s collision shape')),
    `viewer_arm: the missing mesh is not reported: ${info}`);
  const html = readFileSync(join(dir, 'arm.html'), 'utf8');
  assert.ok(html.includes('"format": "stl"'), 'viewer_arm: the STL mesh is not embedded');
  await page.close();
});

test('a 10 s, 1 ms human43 run stays below 20 MB', () => {
  const model = join(SRC, 'models/human43.json');
  mbsens('simulate', model, '--tf', '10', '--dt', '1e-3', '--out', 'human43_10s.csv', '-q');
  mbsens('view', model, 'human43_10s.csv', '-o', 'human43_10s.html');
  const size = statSync(join(dir, 'human43_10s.html')).size;
  assert.ok(size < 20e6, `human43 10 s page: ${size} bytes`);
});
