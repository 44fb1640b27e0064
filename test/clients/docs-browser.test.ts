// /docs in a real browser (Debian's Chromium through playwright-core): opened at 127.0.0.1 and at
// localhost while PUBLIC_BASE_URL names 127.0.0.1, "Try it out" on KB search with a key must show
// a 200 with results, under the page's strict CSP (no violation reported). Every schema must
// render with a real type, not `any`. Screenshots are kept in test-artifacts/clients/ (or
// $TEST_ARTIFACTS_DIR).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { ROOT, startClientStack, type ClientStack } from './support/clients.js';

const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = process.env.TEST_ARTIFACTS_DIR
  ? join(process.env.TEST_ARTIFACTS_DIR, 'clients')
  : join(ROOT, 'test-artifacts', 'clients');

let cs: ClientStack;
let browser: Browser;

/** A page that records CSP violations and failed requests. */
async function openDocs(origin: string): Promise<{ page: Page; problems: string[] }> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console: ${m.text()}`);
  });
  page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()}`));
  await page.goto(`${origin}/docs`);
  await page.waitForSelector('.opblock-summary-path');
  return { page, problems };
}

before(async () => {
  assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is missing: apt-get install -y chromium`);
  mkdirSync(ARTIFACTS, { recursive: true });
  cs = await startClientStack('docs');
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
});

after(async () => {
  await browser?.close();
  await cs?.stop();
});

for (const host of ['127.0.0.1', 'localhost']) {
  test(`when /docs is opened at ${host} and KB search is tried out with a key, then a 200 with results is rendered`, async () => {
    const origin = `http://${host}:${new URL(cs.url).port}`;
    const { page, problems } = await openDocs(origin);

    await page.click('.scheme-container button.authorize');
    await page.fill('.modal-ux .auth-container input', cs.key);
    await page.click('.modal-ux .auth-btn-wrapper button.authorize');
    await page.click('.modal-ux .auth-btn-wrapper button.btn-done');

    const op = page.locator('.opblock', {
      has: page.locator('.opblock-summary-path[data-path="/api/v1/agent/kb/search"]'),
    });
    await op.locator('.opblock-summary-control').click();
    await op.locator('.try-out__btn').click();
    await op.locator('input[placeholder="query"]').fill('reset my password');
    await op.locator('button.execute').click();

    const status = op.locator('.live-responses-table .response .response-col_status');
    await status.first().waitFor();
    assert.equal((await status.first().innerText()).trim(), '200');
    const requestUrl = await op.locator('.request-url pre').innerText();
    assert.ok(requestUrl.startsWith(`${origin}/api/v1/agent/kb/search?`), requestUrl);
    const body = await op
      .locator('.live-responses-table .response-col_description pre')
      .first()
      .innerText();
    assert.match(body, /"results"/);
    assert.match(body, /How do I reset my password\?/);

    await op.screenshot({ path: join(ARTIFACTS, `docs-try-it-out-${host}.png`) });
    assert.deepEqual(problems, [], 'no CSP violation, no failed request');
    await page.close();
  });
}

test('when the schemas are listed, then each one and each of its properties renders with a real type', async () => {
  const { page } = await openDocs(cs.url);
  const models = page.locator('section.models > div > article > .json-schema-2020-12-head');
  const count = await models.count();
  assert.ok(count > 20, `${count} schemas`);
  // One level open: each schema's own type, then its properties' types.
  await page.$$eval(
    'section.models > div > article > .json-schema-2020-12-head > .json-schema-2020-12-accordion',
    (buttons) => buttons.forEach((b) => (b as unknown as { click(): void }).click()),
  );
  const heads = await page.$$eval('section.models .json-schema-2020-12-head', (els) =>
    els.map((e) => {
      type Text = { textContent: string | null } | null;
      const name = e.querySelector(
        '.json-schema-2020-12__title, .json-schema-2020-12__name',
      ) as Text;
      const type = e.querySelector('.json-schema-2020-12__attribute--primary') as Text;
      return `${name?.textContent ?? '?'}: ${type?.textContent ?? ''}`;
    }),
  );
  assert.ok(heads.length > count, 'the properties were expanded');
  assert.deepEqual(
    heads.filter((h) => /\bany\b|: $/.test(h)),
    [],
  );
  assert.ok(heads.includes('week_start: string | null'), heads.join('\n'));
  await page.locator('section.models').screenshot({ path: join(ARTIFACTS, 'docs-schemas.png') });
  await page.close();
});
