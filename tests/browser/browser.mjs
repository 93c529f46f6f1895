// browser.mjs - headless Chromium (Debian's /usr/bin/chromium) driven by
// playwright-core, for the viewer tests and the screenshot and frame-rate
// scripts. Chromium runs as root without a sandbox, offline (no
// background networking), with WebGL on SwiftShader (no GPU here).
import { createRequire } from 'node:module';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const require = createRequire(new URL('../../viewer/package.json', import.meta.url));
const { chromium } = require('playwright-core');

export const CHROMIUM = process.env.MBS_CHROMIUM || '/usr/bin/chromium';

export async function launch() {
  const profile = mkdtempSync(join(tmpdir(), 'mbs-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1280, height: 760 },
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--use-angle=swiftshader', '--enable-unsafe-swiftshader',
      '--disable-renderer-backgrounding', '--disable-background-timer-throttling'],
  });
  context.cleanup = () => rmSync(profile, { recursive: true, force: true });
  context.profile = profile;
  return context;
}

// open a page file, collecting console errors and page errors; waits for the viewer
export async function open(context, file) {
  const page = await context.newPage();
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('request', (r) => { if (!r.url().startsWith('file:') && !r.url().startsWith('data:')) errors.push(`network request: ${r.url()}`); });
  await page.goto('file://' + file);
  await page.waitForFunction(() => window.mbsViewer && window.mbsViewer.ready, null, { timeout: 60000 });
  return { page, errors };
}
