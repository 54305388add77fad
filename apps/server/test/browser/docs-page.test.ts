import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { API_VERSIONS, LATEST_API_VERSION } from '@apikeys/api-types';
import { specOperationIds, startTestServer, type TestServer } from '@apikeys/server/testing';
import { loadSpec } from '@apikeys/spec';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSpecModel } from '../fuzz/spec-model.js';
import { launchChromium, openRecordedPage, type PageActivity } from './support/recorded-page.js';

const SCREENSHOT = fileURLToPath(new URL('./screenshots/docs.png', import.meta.url));
// Generous for a busy 2-core machine (the page renders in about 2 s); a failure names the step that timed out.
const STEP_TIMEOUT_MS = 20_000;

const document = loadSpec(LATEST_API_VERSION);
/** The summary the spec gives an operation. */
function summaryOf(template: string, method: string): string {
  const operation = document.paths[template]?.[method.toLowerCase()] as { summary?: string } | undefined;
  if (!operation?.summary) {
    throw new Error(`${method} ${template} has no summary in the spec`);
  }
  return operation.summary;
}

const operations = readSpecModel(document).operations.map((operation) => ({
  ...operation,
  summary: summaryOf(operation.path.template, operation.method),
}));
const tags = ((document.tags ?? []) as { name: string }[]).map((tag) => tag.name);

/** The operation block Swagger UI renders for an operationId (shown because the page sets displayOperationId). */
function operationBlock(page: Page, operationId: string): Locator {
  return page.locator('.opblock', {
    has: page.locator('.opblock-summary-operation-id', { hasText: new RegExp(`^${operationId}$`) }),
  });
}

/** The texts of the elements that are rendered and visible, trimmed, without the `*` of required parameters. */
function visibleTexts(locator: Locator): Promise<string[]> {
  return locator.evaluateAll((elements) =>
    elements
      .filter((element) => element.checkVisibility())
      .map((element) => (element.textContent ?? '').replace(/\s*\*\s*$/, '').trim()),
  );
}

describe('the API reference page in Chromium', () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let activity: PageActivity;
  let renderMs: number;

  beforeAll(async () => {
    server = await startTestServer();
    browser = await launchChromium(STEP_TIMEOUT_MS);
    ({ page, activity } = await openRecordedPage(browser, server.baseUrl, { timeoutMs: STEP_TIMEOUT_MS }));
    const started = performance.now();
    await page.goto(`${server.baseUrl}/docs`);
    await page
      .locator('.opblock')
      .nth(operations.length - 1)
      .waitFor()
      .catch((error: unknown) => {
        throw new Error(`Swagger UI rendered no operations; what the page did: ${JSON.stringify(activity)}`, {
          cause: error,
        });
      });
    renderMs = Math.round(performance.now() - started);
    for (const { operationId } of operations) {
      const block = operationBlock(page, operationId);
      await block.locator('.opblock-summary-control').click();
      await block.locator('.responses-table').first().waitFor();
    }
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('renders the title and every tag of the spec', async ({ annotate }) => {
    await annotate(`rendered in ${renderMs} ms`);

    const title = (document.info as { title: string }).title;
    expect(await visibleTexts(page.locator('.info .title'))).toEqual([expect.stringContaining(title)]);
    expect(await visibleTexts(page.locator('.opblock-tag > a > span'))).toEqual(tags);
  });

  it.each(operations.map((operation) => [operation.operationId, operation] as const))(
    'shows %s, expanded, with its summary, path, parameters and documented statuses',
    async (operationId, operation) => {
      const block = operationBlock(page, operationId);

      expect(await visibleTexts(block.locator('.opblock-summary-operation-id'))).toEqual([operationId]);
      expect(await visibleTexts(block.locator('.opblock-summary-description'))).toEqual([operation.summary]);
      expect(await visibleTexts(block.locator('.opblock-summary-path'))).toEqual([operation.path.template]);
      expect((await visibleTexts(block.locator('.parameters .parameter__name'))).sort()).toEqual(
        operation.parameters.map((parameter) => parameter.name).sort(),
      );
      expect((await visibleTexts(block.locator('.responses-table .response .response-col_status'))).sort()).toEqual(
        operation.statuses.map(String).sort(),
      );
    },
  );

  it('made every request to this server, and each one succeeded', async ({ annotate }) => {
    await annotate(`${activity.requests.length} requests: ${activity.requests.map((url) => url.pathname).join(' ')}`);

    expect(activity.aborted).toEqual([]);
    expect(activity.requests.filter((url) => url.origin !== server.baseUrl)).toEqual([]);
    expect(activity.requests.map((url) => url.pathname)).toEqual(
      expect.arrayContaining(['/docs', `/openapi/${LATEST_API_VERSION}.json`]),
    );
    expect(activity.failedResponses).toEqual([]);
    expect(activity.errors).toEqual([]);
  });

  it("switches to another version's document with the version selector", async () => {
    const first = API_VERSIONS[0];
    const offered = await page.locator('#api-version option').allTextContents();
    expect(offered).toEqual([...API_VERSIONS].reverse().map((v) => (v === LATEST_API_VERSION ? `${v} (latest)` : v)));

    await page.locator('#api-version').selectOption(`/openapi/${first}.json`);
    await page
      .locator('.opblock')
      .nth(specOperationIds(first).length - 1)
      .waitFor();
    try {
      expect(await page.locator('.opblock').count()).toBe(specOperationIds(first).length);
      expect(await visibleTexts(page.locator('.opblock-summary-operation-id'))).not.toContain('createApiKey');
    } finally {
      await page.locator('#api-version').selectOption(`/openapi/${LATEST_API_VERSION}.json`);
      await page
        .locator('.opblock')
        .nth(operations.length - 1)
        .waitFor();
    }
  });

  it('shows no secret, and saves a screenshot of the expanded reference', async () => {
    expect(await page.locator('body').textContent()).not.toMatch(/sk-(?:adm|api|vfy)-[A-Za-z0-9]{43}/);

    mkdirSync(dirname(SCREENSHOT), { recursive: true });
    rmSync(SCREENSHOT, { force: true });
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
    expect(existsSync(SCREENSHOT)).toBe(true);
  });

  it('sends "Try it out" to the server that serves the page, not to the spec\'s example server', async () => {
    const block = operationBlock(page, 'getHealth');
    const before = activity.requests.length;

    await block.locator('button.try-out__btn').click();
    await block.locator('button.execute').click();
    await block.locator('.live-responses-table tbody .response-col_status').first().waitFor();

    const sent = activity.requests.slice(before).filter((url) => url.pathname === '/health');
    expect(sent.map((url) => url.origin)).toEqual([server.baseUrl]);
    expect(activity.aborted).toEqual([]);
    expect(await visibleTexts(block.locator('.live-responses-table tbody .response-col_status'))).toEqual(['200']);
  });
});
