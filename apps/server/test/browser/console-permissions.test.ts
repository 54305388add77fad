import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KEY_METADATA, LATEST_API_VERSION } from '@apikeys/api-types';
import { API_KEYS_PATH, DEFAULT_ORGANIZATION, startTestServer, type TestServer } from '@apikeys/server/testing';
import { ExpiredApiKeyError, openSqliteStore } from '@apikeys/store';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { seriousViolations } from './support/accessibility.js';
import { launchChromium, openRecordedPage, type PageActivity } from './support/recorded-page.js';

// Keys' permissions and metadata in the admin console (apps/console), built and served by the real server on a
// temporary SQLite database, driven in Debian's chromium: one page, the tests in order, as in console.test.ts.
const STEP_TIMEOUT_MS = 15_000;

/** A request the page sent to the API that changes something, with its JSON body. */
interface SentChange {
  path: string;
  body: unknown;
}

/** An object nested `levels` deep, the object itself the first level. */
function nested(levels: number): Record<string, unknown> {
  let value: Record<string, unknown> = {};
  for (let level = 1; level < levels; level += 1) {
    value = { a: value };
  }
  return value;
}

describe("keys' permissions and metadata in the admin console in Chromium", () => {
  let directory: string;
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let activity: PageActivity;
  let consoleUrl: string;
  /** Every POST the page sent to the API, in order. */
  const changes: SentChange[] = [];
  /** Keys created through the API, each holding other permissions. */
  const keys: Record<'wildcard' | 'everything' | 'billing' | 'bare', string> = {
    wildcard: '',
    everything: '',
    billing: '',
    bare: '',
  };
  /** The key created from the create page. */
  let createdId = '';

  const listedIds = () => page.locator('tbody tr td:first-child .mono').allTextContents();
  const keyPath = () => `${API_KEYS_PATH}/${createdId}`;
  /** The bodies the page sent to update the created key. */
  const updates = () => changes.filter((change) => change.path === keyPath()).map((change) => change.body);
  /** The value of a field of the key's page, by its term. */
  const fieldValue = (term: string) =>
    page.locator('.field-row', { has: page.locator('dt', { hasText: new RegExp(`^${term}$`) }) }).locator('dd');

  async function expectAccessible(name: string): Promise<void> {
    expect(await seriousViolations(page), `axe on ${name}`).toEqual([]);
  }

  beforeAll(async () => {
    directory = mkdtempSync(join(tmpdir(), 'apikeys-console-permissions-'));
    server = await startTestServer({ opened: openSqliteStore(join(directory, 'keys.sqlite')) });
    const api = server.versionClient(LATEST_API_VERSION);
    for (const [field, name, permissions] of [
      ['wildcard', 'Documents wildcard', ['documents.*']],
      ['everything', 'Everything', ['*']],
      ['billing', 'Billing reader', ['billing.read', 'documentsx.read']],
      ['bare', 'No permissions', []],
    ] as const) {
      const { data, error } = await api.POST('/v1/organizations/api_keys', {
        body: { name, permissions: [...permissions] },
      });
      if (data === undefined) {
        throw new Error(`creating ${name}: ${JSON.stringify(error)}`);
      }
      keys[field] = data.id;
    }
    consoleUrl = `${server.baseUrl}/console`;

    browser = await launchChromium(STEP_TIMEOUT_MS);
    ({ page, activity } = await openRecordedPage(browser, server.baseUrl, { timeoutMs: STEP_TIMEOUT_MS }));
    page.on('request', (request) => {
      if (request.method() === 'POST') {
        changes.push({ path: new URL(request.url()).pathname, body: request.postDataJSON() });
      }
    });
    await page.goto(consoleUrl);
    await page.getByLabel('Admin key').fill(server.adminKey);
    await page.getByLabel('Admin key').press('Enter');
    await page.locator('tbody tr').first().waitFor();
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    if (directory) {
      rmSync(directory, { recursive: true, force: true });
    }
  });

  it('creates a key with permissions and metadata, after refusing a wrong name and wrong JSON without sending them', async () => {
    await page.getByRole('link', { name: 'Create a key' }).first().click();
    await page.getByRole('heading', { name: 'Create a key', level: 1 }).waitFor();
    const permissions = page.getByLabel('Permissions (optional)');
    const metadata = page.getByLabel('Metadata, a JSON object (optional)');
    await page.getByLabel('Name').fill('Search indexer');
    await permissions.fill('documents.read\nDocuments.Write');
    await metadata.fill('{"owner": "team-search",}');
    await page.getByRole('button', { name: 'Create the key' }).click();

    await page.getByText('permissions[1]: "Documents.Write" is not a permission name').waitFor();
    await page.getByText(/^metadata: not valid JSON \(.+\)$/).waitFor();
    expect(await permissions.getAttribute('aria-invalid')).toBe('true');
    expect(await metadata.getAttribute('aria-invalid')).toBe('true');
    await expectAccessible('the creation form with refused permissions and metadata');

    await metadata.fill('["team-search"]');
    await page.getByRole('button', { name: 'Create the key' }).click();
    await page.getByText('metadata: must be a JSON object').waitFor();
    expect(changes).toEqual([]);

    await permissions.fill('documents.read, documents.write');
    await metadata.fill('{"owner": "team-search", "plan": {"tier": "gold"}}');
    await page.getByRole('button', { name: 'Create the key' }).click();
    await page.getByRole('heading', { name: 'Key created', level: 1 }).waitFor();
    expect(changes).toEqual([
      {
        path: API_KEYS_PATH,
        body: {
          name: 'Search indexer',
          permissions: ['documents.read', 'documents.write'],
          metadata: { owner: 'team-search', plan: { tier: 'gold' } },
        },
      },
    ]);

    await page.getByRole('link', { name: 'Search indexer' }).click();
    await page.getByRole('heading', { name: 'Search indexer', level: 1 }).waitFor();
    createdId = new URL(page.url()).pathname.split('/').at(-1) ?? '';
    expect(await fieldValue('Permissions').locator('li').allTextContents()).toEqual([
      'documents.read',
      'documents.write',
    ]);
    expect(await fieldValue('Metadata').locator('pre').textContent()).toBe(
      JSON.stringify({ owner: 'team-search', plan: { tier: 'gold' } }, null, 2),
    );
    await page.locator('.history tbody tr').first().waitFor();
    await expectAccessible("a key's page with permissions and metadata");
  });

  it("shows a key's none as None", async () => {
    await page.goto(`${consoleUrl}/keys/${keys.bare}`);
    await page.getByRole('heading', { name: 'No permissions', level: 1 }).waitFor();

    expect(await fieldValue('Permissions').textContent()).toBe('None');
    expect(await fieldValue('Metadata').textContent()).toBe('None');
    expect(await page.getByLabel('Permissions', { exact: true }).inputValue()).toBe('');
  });

  it('edits them: each refused value is explained next to its field and nothing is sent', async () => {
    await page.goto(`${consoleUrl}/keys/${createdId}`);
    await page.getByRole('heading', { name: 'Search indexer', level: 1 }).waitFor();
    const permissions = page.getByLabel('Permissions', { exact: true });
    const metadata = page.getByLabel('Metadata (a JSON object)');
    const save = page.getByRole('button', { name: 'Save permissions and metadata' });
    expect(await permissions.inputValue()).toBe('documents.read\ndocuments.write');
    expect(JSON.parse(await metadata.inputValue())).toEqual({ owner: 'team-search', plan: { tier: 'gold' } });

    await permissions.fill('documents.read\ndocuments.write\ndocuments.read');
    await metadata.fill(JSON.stringify(nested(KEY_METADATA.maxDepth + 1)));
    await save.click();
    await page.getByText('permissions[2]: "documents.read" is listed twice').waitFor();
    await page
      .getByText(`metadata: nested ${KEY_METADATA.maxDepth + 1} levels deep, at most ${KEY_METADATA.maxDepth}`)
      .waitFor();
    expect(await permissions.getAttribute('aria-invalid')).toBe('true');
    await expectAccessible('the permissions and metadata form with refused values');

    await permissions.fill('documents.read');
    const large = { note: 'x'.repeat(KEY_METADATA.maxSerializedBytes) };
    await metadata.fill(JSON.stringify(large));
    await save.click();
    await page
      .getByText(`metadata: ${JSON.stringify(large).length} bytes as JSON, at most ${KEY_METADATA.maxSerializedBytes}`)
      .waitFor();
    expect(await page.locator('.field-error').count()).toBe(1);
    expect(await permissions.getAttribute('aria-invalid')).toBe('false');
    expect(updates()).toEqual([]);
  });

  it('sends only what changed, shows the new values, and records each change in the history', async () => {
    const permissions = page.getByLabel('Permissions', { exact: true });
    const metadata = page.getByLabel('Metadata (a JSON object)');
    const save = page.getByRole('button', { name: 'Save permissions and metadata' });

    await permissions.fill('documents.read\ndocuments.write\nsearch.*');
    await metadata.fill('{\n  "owner": "team-search",\n  "plan": { "tier": "gold" }\n}');
    await save.click();
    await page.getByRole('status').filter({ hasText: 'The permissions are saved.' }).waitFor();
    expect(updates()).toEqual([{ permissions: ['documents.read', 'documents.write', 'search.*'] }]);
    await expect
      .poll(() => fieldValue('Permissions').locator('li').allTextContents())
      .toEqual(['documents.read', 'documents.write', 'search.*']);
    expect(await page.locator('.field-error').count()).toBe(0);

    await metadata.fill('{"owner": "team-search"}');
    await save.click();
    await page.getByRole('status').filter({ hasText: 'The metadata is saved.' }).waitFor();
    expect(updates().at(-1)).toEqual({ metadata: { owner: 'team-search' } });
    await expect
      .poll(() => fieldValue('Metadata').locator('pre').textContent())
      .toBe(JSON.stringify({ owner: 'team-search' }, null, 2));

    await save.click();
    await page.getByRole('status').filter({ hasText: 'Nothing to save' }).waitFor();
    expect(updates()).toHaveLength(2);

    const history = page.locator('.history tbody td');
    await history
      .filter({
        hasText: 'permissions: documents.read, documents.write → documents.read, documents.write, search.*',
      })
      .waitFor();
    await history
      .filter({ hasText: 'metadata: {"owner":"team-search","plan":{"tier":"gold"}} → {"owner":"team-search"}' })
      .waitFor();

    await page.reload();
    expect(await permissions.inputValue()).toBe('documents.read\ndocuments.write\nsearch.*');
    expect(JSON.parse(await metadata.inputValue())).toEqual({ owner: 'team-search' });
  });

  it("shows the API's refusal of a change the console let through (the key expired meanwhile), keeping what was typed", async () => {
    const permissions = page.getByLabel('Permissions', { exact: true });
    const alert = page.getByRole('alert');
    const record = await server.store.getApiKey(DEFAULT_ORGANIZATION.id, createdId);
    if (record === undefined) {
      throw new Error(`${createdId} is not in the store`);
    }
    const refusal = vi.spyOn(server.store, 'updateApiKey').mockRejectedValue(new ExpiredApiKeyError(record));
    try {
      await permissions.fill('documents.read');
      await page.getByRole('button', { name: 'Save permissions and metadata' }).click();

      await expect.poll(() => alert.textContent()).toContain('Saving the permissions and metadata failed');
      expect(await alert.textContent()).toContain('invalid_request_error');
      expect(await alert.textContent()).toContain('an expired key can only be renamed or archived');
      expect(await alert.getByTestId('request-id').textContent()).toMatch(/^req_/);
      expect(updates().at(-1)).toEqual({ permissions: ['documents.read'] });
      expect(await permissions.inputValue()).toBe('documents.read');
      await expectAccessible("a key's page after a refused save");
    } finally {
      refusal.mockRestore();
    }
  });

  it('filters the list by a permission: keys holding it or a wildcard over it, and not the others', async () => {
    await page.goto(consoleUrl);
    await page.locator('tbody tr').first().waitFor();
    const filter = page.getByLabel('Grants permission');
    const before = page.url();

    await filter.fill('Documents.Read');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page
      .getByText('"Documents.Read" is not a permission name, such as documents.read, documents.* or *')
      .waitFor();
    expect(await filter.getAttribute('aria-invalid')).toBe('true');
    expect(page.url()).toBe(before);
    await expectAccessible('the keys list with a refused permission filter');

    await filter.fill('documents.read');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/permission=documents\.read/);
    const { data: expected } = await server
      .versionClient(LATEST_API_VERSION)
      .GET('/v1/organizations/api_keys', { params: { query: { permission: 'documents.read' } } });
    const expectedIds = expected?.data.map((key) => key.id) ?? [];
    await expect.poll(listedIds).toEqual(expectedIds);

    expect(expectedIds).toEqual(expect.arrayContaining([keys.wildcard, keys.everything, createdId]));
    expect(expectedIds).not.toContain(keys.billing);
    expect(expectedIds).not.toContain(keys.bare);
    expect(Object.fromEntries(new URL(page.url()).searchParams)).toEqual({ permission: 'documents.read' });
    await page.reload();
    await expect.poll(listedIds).toEqual(expectedIds);
    expect(await filter.inputValue()).toBe('documents.read');
    expect(await page.locator('.field-error').count()).toBe(0);
    await expectAccessible('the keys list filtered by a permission');

    await page.getByRole('link', { name: 'Clear filters' }).click();
    await page.waitForURL(consoleUrl);
    await expect.poll(async () => (await listedIds()).includes(keys.billing)).toBe(true);
  });

  it('filters the list by a wildcard: the keys holding it or `*`, not those holding a name under it', async () => {
    await page.goto(consoleUrl);
    await page.locator('tbody tr').first().waitFor();
    const listRequests: URL[] = [];
    const recordList = (request: { url(): string }) => {
      const url = new URL(request.url());
      if (url.pathname === API_KEYS_PATH) {
        listRequests.push(url);
      }
    };
    page.on('request', recordList);

    await page.getByLabel('Grants permission').fill('documents.*');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/permission=documents\.\*/);

    await expect.poll(listedIds).toEqual([keys.everything, keys.wildcard]);
    page.off('request', recordList);
    expect(listRequests.map((url) => url.search)).toEqual(['?permission=documents.*']);
    expect(await page.locator('.field-error').count()).toBe(0);
    await expectAccessible('the keys list filtered by a wildcard');
  });

  it('sent every request to this server, refused only the save the test made the server refuse, and threw nothing', async () => {
    expect(activity.failedResponses).toEqual([`400 POST ${keyPath()}`]);
    expect(activity.aborted).toEqual([]);
    expect(activity.requests.filter((url) => url.origin !== server.baseUrl)).toEqual([]);
    expect(activity.errors).toEqual([]);
  });
});
