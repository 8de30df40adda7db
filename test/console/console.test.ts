/**
 * The web console in a real browser: Debian's chromium driven by playwright-core (no browser
 * download), against a real serving host with real bash drives in tmux. The table and its live
 * state, the drive page's terminal buffer, take-over typing through the gate (audited), the
 * token on every request, the Origin and Host checks, and redaction for an observe token.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import WebSocket from 'ws';
import { serve, type ServingHost } from '../../lib/serve/serve.js';
import { ConsoleServer } from '../../lib/console/console-server.js';
import { Client } from '../../lib/client/client.js';
import { readAudit } from '../../journal/audit-log.js';
import { BASH, BASH_ARGS, hostConfig, sweep, tempDataDir } from '../serve/harness.js';
import { allow } from '../helpers.js';

const CHROMIUM = '/usr/bin/chromium';
const dataDir = tempDataDir();
/** docs/ keeps the README's screenshots: written there on request (TMUX_DRIVE_SCREENSHOTS=1), else beside the data dir. */
const SHOTS = process.env.TMUX_DRIVE_SCREENSHOTS === '1' ? join(__dirname, '../../docs') : join(dataDir, '..');
/** Printed in two halves, so only the program's output holds it whole (never the typed command). */
const SECRET = 'ghp_R3allyS3cretT0kenValue0123456789abcd';
const PRINT_SECRET = "printf '%s%s\\n' ghp_R3allyS3cret T0kenValue0123456789abcd";

let host: ServingHost<ConsoleServer>;
let owner: Client;
let ownerToken: string;
let observeToken: string;
let browser: Browser;
let base: string;
/** What the pages reported (script errors, refused resources): printed when a test fails. */
const pageErrors: string[] = [];

async function loggedIn(token: string): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext();
  const page = await context.newPage();
  page.on('pageerror', (e) => pageErrors.push(e.message));
  page.on('console', (m) => {
    if (m.type() === 'error') pageErrors.push(m.text());
  });
  const first = await page.goto(base);
  expect(first?.status()).toBe(401);
  await page.fill('input[name="token"]', token);
  await Promise.all([page.waitForURL(base), page.click('button[type="submit"]')]);
  return { context, page };
}

/** The text in the page's terminal buffer (what the operator sees), rows joined by newlines. */
async function terminalText(page: Page): Promise<string> {
  return page.evaluate(() => {
    const term = (window as unknown as { tmuxDriveTerminal: { buffer: { active: { length: number; getLine(i: number): { translateToString(trim: boolean): string } | undefined } } } }).tmuxDriveTerminal;
    const b = term.buffer.active;
    const rows: string[] = [];
    for (let i = 0; i < b.length; i++) rows.push(b.getLine(i)?.translateToString(true) ?? '');
    return rows.join('\n');
  });
}

beforeAll(async () => {
  host = await serve({ dataDir, config: hostConfig({ allow: [BASH, allow('whiptail', '/usr/bin/whiptail'), allow('vim', '/usr/bin/vim.basic')] }), console: ConsoleServer.at('127.0.0.1:0') });
  base = host.console?.url as string;
  ownerToken = readFileSync(join(dataDir, 'serve', 'owner.token'), 'utf8').trim();
  owner = await Client.connect(dataDir);
  observeToken = (await owner.mint({ classes: ['observe'], label: 'watcher' })).token;
  for (const name of ['alpha', 'beta', 'gamma']) {
    const d = await owner.create({ allowId: 'bash', name, args: BASH_ARGS });
    await d.wait({ forText: '$ ' });
  }
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  for (const i of await owner.list().catch(() => [])) if (i.state === 'live') await owner.drive(i.id).kill().catch(() => undefined);
  await owner?.close();
  await host?.close();
  sweep(dataDir);
});

describe('the console in a browser', () => {
  it('lists the drives; a state change shows within 1 s; a drive created later appears', async () => {
    const { context, page } = await loggedIn(ownerToken);
    try {
      await page.waitForSelector('tr[data-drive="gamma"]', { timeout: 5000 }).catch((e: unknown) => {
        throw new Error(`${String(e)}; page errors: ${pageErrors.join(' | ')}`);
      });
      const names = await page.$$eval('#drives tbody tr', (trs) => trs.map((tr) => (tr as HTMLElement).dataset.drive));
      expect(names).toEqual(expect.arrayContaining(['alpha', 'beta', 'gamma']));
      expect(await page.textContent('tr[data-drive="alpha"] td[data-col="program"]')).toContain('bash');

      // The host emits the state change; the page must show it within a second of that.
      const gamma = host.driver.get('gamma');
      const emitted = new Promise<number>((resolve) => {
        const l = gamma.on('state', (s) => {
          if (s.state === 'exited') {
            l.dispose();
            resolve(Date.now());
          }
        });
      });
      await owner.drive('gamma').sendText('exit 3', { submit: true });
      const at = await emitted;
      await page.waitForFunction(() => document.querySelector('tr[data-drive="gamma"] td[data-col="state"] .value')?.textContent === 'exited', undefined, { timeout: 5000 });
      expect(Date.now() - at).toBeLessThan(1000);
      await page.waitForFunction(() => document.querySelector('tr[data-drive="gamma"] td[data-col="outcome"] .value')?.textContent === 'failed', undefined, { timeout: 5000 });

      // A drive created later appears; one that waits for a person (a dialog) goes to the top.
      await owner.create({ allowId: 'whiptail', name: 'delta', args: ['--title', 'Deploy', '--yesno', 'Deploy to production now?', '10', '44'] });
      await page.waitForSelector('tr[data-drive="delta"]', { timeout: 5000 });
      await page.waitForSelector('tr.waiting[data-drive="delta"]', { timeout: 5000 });
      expect(await page.$eval('#drives tbody tr', (tr) => (tr as HTMLElement).dataset.drive)).toBe('delta');
      expect(await page.textContent('tr[data-drive="delta"] td[data-col="state"]')).toMatch(/dialog: \w+/);
      await page.screenshot({ path: join(SHOTS, 'console-table.png') });
    } finally {
      await context.close();
    }
  }, 60_000);

  it('a drive page shows what the program printed, read from the terminal buffer in the page', async () => {
    await owner.drive('alpha').sendText('echo printed-$((6 * 7))', { submit: true });
    await owner.drive('alpha').wait({ forText: 'printed-42' });
    const { context, page } = await loggedIn(observeToken);
    try {
      await page.goto(`${base}drive/alpha`);
      await expect.poll(() => terminalText(page), { timeout: 5000 }).toContain('printed-42');
      // Later output arrives live.
      await owner.drive('alpha').sendText('echo later-$((2 + 3))', { submit: true });
      await expect.poll(() => terminalText(page), { timeout: 5000 }).toContain('later-5');
      // An observe token is read-only: no take-over offered, and asking anyway is refused.
      expect(await page.isHidden('#takeover')).toBe(true);
      await page.evaluate(() => (document.getElementById('takeover') as HTMLButtonElement).click());
      await page.waitForFunction(() => document.getElementById('notice')?.textContent?.includes('NOT_PERMITTED'));
    } finally {
      await context.close();
    }
  }, 60_000);

  it('typing in take-over reaches the program through the gate, audited; release makes the page read-only again', async () => {
    const { context, page } = await loggedIn(ownerToken);
    try {
      await page.goto(`${base}drive/beta`);
      await expect.poll(() => terminalText(page), { timeout: 5000 }).toContain('$');
      await page.click('#takeover');
      await page.waitForSelector('#mode.driving');
      await page.click('#screen');
      await page.keyboard.type('echo typed-$((5 * 5))');
      await page.keyboard.press('Enter');
      expect((await owner.drive('beta').wait({ forText: 'typed-25', timeoutMs: 5000 })).outcome).toBe('text');
      await expect.poll(() => terminalText(page), { timeout: 5000 }).toContain('typed-25');
      // The table shows who drives it from the console.
      expect(host.console?.fleet.taker('beta')).toBe('owner');
      const audit = readAudit(dataDir).filter((r) => r.kind === 'call' && r.sessionId === 'beta' && (r.tags as { verb?: string }).verb === 'sendText');
      expect(audit.length).toBeGreaterThan(0);
      expect(audit.every((r) => (r.tags as { token?: string }).token === 'owner')).toBe(true);
      await page.screenshot({ path: join(SHOTS, 'console-drive.png') });

      await page.click('#release');
      await page.waitForSelector('#mode:not(.driving)');
      await page.keyboard.type('echo ignored');
      await page.keyboard.press('Enter');
      await new Promise((r) => setTimeout(r, 300));
      expect((await owner.drive('beta').read()).content).not.toContain('ignored');
      expect(host.console?.fleet.taker('beta')).toBeUndefined();
    } finally {
      await context.close();
    }
  }, 60_000);

  it('take-over drives a full-screen program: keys (Escape, Enter) reach vim by their names', async () => {
    const vim = await owner.create({ allowId: 'vim', name: 'editor', args: ['-u', 'NONE', '-N'] });
    await vim.wait({ forIdleMs: 300 });
    const { context, page } = await loggedIn(ownerToken);
    try {
      await page.goto(`${base}drive/editor`);
      await expect.poll(() => terminalText(page), { timeout: 5000 }).toContain('~');
      await page.click('#takeover');
      await page.waitForSelector('#mode.driving');
      await page.click('#screen');
      await page.keyboard.type('ihello from the console');
      await page.keyboard.press('Escape');
      await page.keyboard.type(':s/hello/HELLO/');
      await page.keyboard.press('Enter');
      await expect.poll(async () => (await vim.read()).content, { timeout: 5000 }).toMatch(/^HELLO from the console *$/m);
      await expect.poll(() => terminalText(page), { timeout: 5000 }).toMatch(/^HELLO from the console *$/m);
    } finally {
      await context.close();
    }
  }, 60_000);

  it('a secret a drive prints is not in the page for an observe token (an admin sees it)', async () => {
    await owner.drive('alpha').sendText(PRINT_SECRET, { submit: true });
    await owner.drive('alpha').wait({ forText: 'T0kenValue0123456789abcd\n' }).catch(() => undefined);
    await owner.drive('alpha').wait({ forIdleMs: 300 });
    const observer = await loggedIn(observeToken);
    const admin = await loggedIn(ownerToken);
    try {
      await observer.page.goto(`${base}drive/alpha`);
      await admin.page.goto(`${base}drive/alpha`);
      await expect.poll(() => terminalText(admin.page), { timeout: 5000 }).toContain(SECRET);
      await expect.poll(() => terminalText(observer.page), { timeout: 5000 }).toContain('printf');
      expect(await terminalText(observer.page)).not.toContain(SECRET);
      expect(await observer.page.content()).not.toContain(SECRET);
    } finally {
      await observer.context.close();
      await admin.context.close();
    }
  }, 60_000);
});

describe('a hostile program', () => {
  it('prints markup: it shows as text in the terminal, never as elements, and runs nothing', async () => {
    await owner.drive('alpha').sendText(`printf '%s\\n' '<img src=x onerror="document.title=1">' '<script>document.title=2</script>'`, { submit: true });
    await expect.poll(async () => (await owner.drive('alpha').read()).content, { timeout: 5000 }).toContain('\n<script>document.title=2</script>\n');
    const { context, page } = await loggedIn(observeToken);
    try {
      await page.goto(`${base}drive/alpha`);
      await expect.poll(() => terminalText(page), { timeout: 5000 }).toContain('\n<img src=x onerror="document.title=1">');
      await page.waitForTimeout(300);
      expect(await page.title()).toBe('tmux-drive: alpha');
      expect(await page.$$('img')).toHaveLength(0);
      expect(await page.$$eval('script', (ss) => ss.map((x) => (x as HTMLScriptElement).src).filter((src) => !src.includes('/static/') && !src.includes('/vendor/')))).toEqual([]);
    } finally {
      await context.close();
    }
  }, 60_000);
});

describe('the console refuses', () => {
  it('every request without a token: 401 (pages, scripts, the vendored terminal, the API, a bad token)', async () => {
    for (const path of ['', 'drive/alpha', 'static/table.js', 'vendor/xterm.mjs', 'api/whoami']) {
      const res = await fetch(`${base}${path}`);
      expect(res.status, path).toBe(401);
      expect(await res.text()).not.toContain('tmuxDriveTerminal');
    }
    const bad = await fetch(`${base}api/whoami`, { headers: { Authorization: 'Bearer tdk_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' } });
    expect(bad.status).toBe(401);
    const good = await fetch(`${base}api/whoami`, { headers: { Authorization: `Bearer ${observeToken}` } });
    expect(good.status).toBe(200);
    expect(await good.json()).toMatchObject({ classes: ['observe'] });
    // Every answer carries the CSP (no inline script) and nosniff.
    expect(good.headers.get('content-security-policy')).toMatch(/script-src 'self'(;|$)/);
    expect(good.headers.get('content-security-policy')).not.toMatch(/script-src[^;]*unsafe-inline/);
    expect(good.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('a login sets an HttpOnly, SameSite=Strict cookie that is not the token; a cross-origin login is refused', async () => {
    const origin = base.replace(/\/$/, '');
    const res = await fetch(`${base}login`, { method: 'POST', redirect: 'manual', headers: { Origin: origin, 'Content-Type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ token: observeToken }).toString() });
    expect(res.status).toBe(303);
    const cookie = res.headers.get('set-cookie') ?? '';
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Strict/);
    expect(cookie).not.toContain(observeToken);
    const evil = await fetch(`${base}login`, { method: 'POST', redirect: 'manual', headers: { Origin: 'http://evil.example', 'Content-Type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ token: observeToken }).toString() });
    expect(evil.status).toBe(403);
    expect(evil.headers.get('set-cookie')).toBeNull();
  });

  it('a token scoped to one drive sees only it; revoking a token ends its open pages at once', async () => {
    const scoped = await owner.mint({ classes: ['observe'], drives: ['alpha'], label: 'one' });
    const { context, page } = await loggedIn(scoped.token);
    try {
      await page.waitForSelector('tr[data-drive="alpha"]');
      expect(await page.$$eval('#drives tbody tr', (trs) => trs.map((tr) => (tr as HTMLElement).dataset.drive))).toEqual(['alpha']);
      await page.goto(`${base}drive/beta`);
      await page.waitForFunction(() => document.getElementById('notice')?.textContent?.includes('NOT_PERMITTED'), undefined, { timeout: 5000 });
      expect((await terminalText(page)).trim()).toBe('');

      await page.goto(`${base}drive/alpha`);
      await expect.poll(() => terminalText(page), { timeout: 5000 }).toContain('$');
      await owner.revoke(scoped.id);
      await page.waitForFunction(() => document.getElementById('notice')?.textContent?.includes('token_revoked'), undefined, { timeout: 5000 });
      expect((await page.goto(base))?.status()).toBe(401);
    } finally {
      await context.close();
    }
  }, 60_000);

  it('an expired token: its open page is closed when it expires, and it logs in no more', async () => {
    // Long enough to log in and open a page on a loaded machine; the page must then be ended by the expiry itself.
    const brief = await owner.mint({ classes: ['observe'], ttlMs: 10_000, label: 'brief' });
    const { context, page } = await loggedIn(brief.token);
    try {
      await page.goto(`${base}drive/alpha`);
      await expect.poll(() => terminalText(page), { timeout: 8000 }).toContain('$');
      await page.waitForFunction(() => document.getElementById('notice')?.textContent?.includes('token_expired'), undefined, { timeout: 15_000 });
      expect((await page.goto(base))?.status()).toBe(401);
    } finally {
      await context.close();
    }
  }, 60_000);

  it('a malformed drive path is a 404 and the host keeps serving', async () => {
    const auth = { Authorization: `Bearer ${ownerToken}` };
    for (const path of ['drive/%E0%A4%A', 'drive/..%2F..%2Fetc', 'drive/a%2Fb', 'static/../../package.json', 'vendor/xterm.js.map']) {
      expect((await fetch(`${base}${path}`, { headers: auth })).status, path).toBe(404);
    }
    expect((await fetch(`${base}api/whoami`, { headers: auth })).status).toBe(200);
  });

  it('a request naming another host (DNS rebinding) is refused', async () => {
    const port = new URL(base).port;
    const status = await new Promise<number>((resolve, reject) => {
      import('node:http').then(({ request }) => {
        const req = request({ host: '127.0.0.1', port, path: '/api/whoami', headers: { Host: `evil.example:${port}`, Authorization: `Bearer ${ownerToken}` } }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('error', reject);
        req.end();
      }, reject);
    });
    expect(status).toBe(421);
  });

  it('a WebSocket without a token, or from another origin, is refused', async () => {
    const wsUrl = `${base.replace(/^http/, 'ws')}ws/fleet`;
    const outcome = (headers: Record<string, string>): Promise<string> =>
      new Promise((resolve) => {
        const ws = new WebSocket(wsUrl, { headers });
        ws.on('open', () => {
          ws.close();
          resolve('open');
        });
        ws.on('unexpected-response', (_req, res) => resolve(String(res.statusCode)));
        ws.on('error', () => resolve('error'));
      });
    expect(await outcome({})).toBe('401');
    expect(await outcome({ Authorization: `Bearer ${ownerToken}`, Origin: 'http://evil.example' })).toBe('403');
    expect(await outcome({ Authorization: `Bearer ${ownerToken}`, Origin: base.replace(/\/$/, '') })).toBe('open');

    // In the browser: a page of another origin on the same machine (same site for cookies: the
    // port differs) opens a WebSocket to the console while the operator is logged in. The login
    // cookie goes along; the Origin check refuses it.
    const evil: Server = createServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/html' });
      res.end(`<!doctype html><script>
        const ws = new WebSocket(${JSON.stringify(wsUrl)});
        ws.onopen = () => { document.title = 'opened'; };
        ws.onmessage = (e) => { document.title = 'read:' + e.data.slice(0, 40); };
        ws.onerror = () => { document.title = 'refused'; };
      </script>`);
    });
    await new Promise<void>((r) => evil.listen(0, '127.0.0.1', r));
    const { context, page } = await loggedIn(ownerToken);
    try {
      const addr = evil.address();
      await page.goto(`http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}/`);
      await page.waitForFunction(() => document.title !== '', undefined, { timeout: 5000 });
      expect(await page.title()).toBe('refused');
    } finally {
      await context.close();
      evil.close();
    }
  }, 60_000);
});
