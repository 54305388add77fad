import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { API_KEY_NAME_LENGTH, LATEST_API_VERSION } from '@apikeys/api-types';
import { DEFAULT_ORGANIZATION, startTestServer, type TestServer } from '@apikeys/server/testing';
import { openSqliteStore } from '@apikeys/store';
import { seedApiKeys } from '@apikeys/store/seeding';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { seriousViolations } from './support/accessibility.js';
import { launchChromium, openRecordedPage, type PageActivity } from './support/recorded-page.js';

// The admin console (apps/console), built and served by the real server on a temporary SQLite database, driven in
// Debian's chromium: one browser, one server, one page, the tests in order (each goes on from where the last left).
// UPDATE_SCREENSHOTS=1 writes the screenshots of docs/console.md into docs/console/.
const STEP_TIMEOUT_MS = 15_000;
const SEEDED_KEYS = 300;
const SCREENSHOTS =
  process.env.UPDATE_SCREENSHOTS === '1' ? fileURLToPath(new URL('../../../../docs/console/', import.meta.url)) : null;

// The browser globals that the functions run in the page use, declared for this module only: the server's types
// have no DOM library, and adding it would type the server's own code against browser globals.
interface PageElement {
  tagName: string;
  textContent: string | null;
  name?: string;
  labels?: ArrayLike<{ textContent: string | null }> | null;
}
declare const window: {
  sessionStorage: Record<string, string> & { length: number };
  localStorage: { length: number };
};
declare const document: {
  cookie: string;
  body: PageElement;
  activeElement: PageElement | null;
  documentElement: { scrollWidth: number };
};
interface HTMLInput {
  type: string;
}
declare const navigator: { clipboard: { readText(): Promise<string> } };
declare function getComputedStyle(element: PageElement): { outlineStyle: string };

/** Saves a screenshot for docs/console.md when UPDATE_SCREENSHOTS=1; `mask` hides secrets. */
async function screenshot(page: Page, name: string, mask: Locator[] = []): Promise<void> {
  if (SCREENSHOTS === null) {
    return;
  }
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({
    path: join(SCREENSHOTS, `${name}.png`),
    fullPage: true,
    mask,
    maskColor: '#9ca3af',
    animations: 'disabled',
  });
}

describe('the admin console in Chromium', () => {
  let directory: string;
  let server: TestServer;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let activity: PageActivity;
  let consoleUrl: string;
  /** Keys created through the API, the newest of the organization. */
  const named: Record<'billing' | 'export' | 'rotated' | 'keyboard', string> = {
    billing: '',
    export: '',
    rotated: '',
    keyboard: '',
  };

  /** The IDs of the keys in the table, top to bottom. */
  const listedIds = () => page.locator('tbody tr td:first-child .mono').allTextContents();
  const rows = () => page.locator('tbody tr');
  const alert = () => page.getByRole('alert');
  const badge = (status: RegExp) => page.locator('dd .badge', { hasText: status });

  /** The focused element as `tag text` (a field by its label), or `body` when the focus fell to the page. */
  const focused = () =>
    page.evaluate(() => {
      const element = document.activeElement;
      if (!element || element === document.body) {
        return 'body';
      }
      const tag = element.tagName.toLowerCase();
      const label = element.labels?.[0]?.textContent ?? element.textContent ?? '';
      return `${tag} ${label}`.trim();
    });

  /** Presses Tab (or Shift+Tab) until `target` (as `focused` names it) has the focus. */
  async function tabTo(target: string, { backwards = false } = {}): Promise<void> {
    for (let step = 0; step < 40; step += 1) {
      await page.keyboard.press(backwards ? 'Shift+Tab' : 'Tab');
      if ((await focused()) === target) {
        return;
      }
    }
    throw new Error(`Tab never reached ${target}`);
  }

  async function expectAccessible(name: string): Promise<void> {
    expect(await seriousViolations(page), `axe on ${name}`).toEqual([]);
  }

  beforeAll(async () => {
    directory = mkdtempSync(join(tmpdir(), 'apikeys-console-e2e-'));
    server = await startTestServer({ opened: openSqliteStore(join(directory, 'keys.sqlite')) });
    await seedApiKeys(server.store, {
      organizationId: DEFAULT_ORGANIZATION.id,
      count: SEEDED_KEYS,
      workspaces: 2,
      users: 3,
      seed: 17,
    });
    const api = server.versionClient(LATEST_API_VERSION);
    for (const [field, name] of [
      ['keyboard', 'Keyboard key'],
      ['rotated', 'Mobile app'],
      ['export', 'Nightly export'],
      ['billing', 'Billing service'],
    ] as const) {
      // The key whose page is the screenshot of docs/console.md shows what a key can carry.
      const attributes =
        field === 'billing'
          ? { permissions: ['invoices.read', 'invoices.write', 'customers.*'], metadata: { owner: 'team-billing' } }
          : {};
      const { data } = await api.POST('/v1/organizations/api_keys', { body: { name, ...attributes } });
      named[field] = data?.id ?? '';
    }
    consoleUrl = `${server.baseUrl}/console`;

    browser = await launchChromium(STEP_TIMEOUT_MS);
    ({ context, page, activity } = await openRecordedPage(browser, server.baseUrl, { timeoutMs: STEP_TIMEOUT_MS }));
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.baseUrl });
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    if (directory) {
      rmSync(directory, { recursive: true, force: true });
    }
  });

  it("shows the API's error message and request ID for a wrong key, and keeps nothing", async () => {
    await page.goto(consoleUrl);
    await page.getByLabel('Admin key').fill(`sk-adm-${'x'.repeat(49)}`);
    await page.getByRole('button', { name: 'Sign in' }).click();

    await expect.poll(() => alert().textContent()).toContain('Sign-in failed');
    expect(await alert().textContent()).toContain('authentication_error');
    expect(await alert().getByTestId('request-id').textContent()).toMatch(/^req_/);
    expect(await page.evaluate(() => window.sessionStorage.length)).toBe(0);
    await expectAccessible('the sign-in page with an error');
  });

  it('signs in from the keyboard; the key stays in sessionStorage, never in localStorage, a cookie or a URL', async () => {
    // A text field masked by CSS: a password field would make the browser offer to save the key.
    expect(await page.getByLabel('Admin key').evaluate((input) => (input as unknown as HTMLInput).type)).toBe('text');
    expect(await page.getByLabel('Admin key').getAttribute('autocomplete')).toBe('off');
    await page.getByLabel('Admin key').fill(server.adminKey);
    await screenshot(page, 'sign-in', [page.getByLabel('Admin key')]);
    await page.getByLabel('Admin key').press('Enter');

    await page.getByRole('heading', { name: 'API keys', level: 1 }).waitFor();
    await rows().first().waitFor();
    // The form that had the focus is gone: the page has it.
    expect(await focused()).toMatch(/^main /);
    const storage = await page.evaluate(() => ({
      session: Object.values(window.sessionStorage),
      local: window.localStorage.length,
      cookie: document.cookie,
    }));
    expect(storage).toEqual({ session: [server.adminKey], local: 0, cookie: '' });
    expect(activity.requests.filter((url) => url.href.includes(server.adminKey))).toEqual([]);
    expect(new URL(page.url()).pathname).toBe('/console');
  });

  it('lists the keys newest first, a page of 20, with every column', async () => {
    const { data } = await server.versionClient(LATEST_API_VERSION).GET('/v1/organizations/api_keys');

    expect(await listedIds()).toEqual(data?.data.map((key) => key.id));
    expect(await page.locator('thead th').allTextContents()).toEqual([
      'Name',
      'Status',
      'Scope',
      'Created',
      'Created by',
      'Expires',
      'Last used',
    ]);
    expect(await rows().first().locator('td').first().textContent()).toContain('Billing service');
    await expectAccessible('the keys list');
    await screenshot(page, 'keys');
  });

  it('filters by status, workspace and creator, keeps the filters in the URL, and shows them after a reload', async () => {
    const api = server.versionClient(LATEST_API_VERSION);
    const { data: sample } = await api.GET('/v1/organizations/api_keys', { params: { query: { limit: 200 } } });
    const workspaced = sample?.data.find((key) => key.scope.type === 'workspace' && key.created_by?.type === 'user');
    const workspaceId = workspaced?.scope.type === 'workspace' ? workspaced.scope.workspace_id : '';
    const userId = workspaced?.created_by?.id ?? '';
    const filters = { status: 'inactive', workspace_id: workspaceId, created_by_user_id: userId } as const;
    const { data: expected } = await api.GET('/v1/organizations/api_keys', { params: { query: filters } });
    expect(expected?.data.length).toBeGreaterThan(0);

    await page.getByLabel('Status').selectOption('inactive');
    await page.getByLabel('Workspace ID').fill(workspaceId);
    await page.getByLabel('Created by (user ID)').fill(userId);
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/status=inactive/);
    await expect.poll(listedIds).toEqual(expected?.data.map((key) => key.id));

    expect(Object.fromEntries(new URL(page.url()).searchParams)).toEqual(filters);
    await page.reload();
    await expect.poll(listedIds).toEqual(expected?.data.map((key) => key.id));
    expect(await page.getByLabel('Status').inputValue()).toBe('inactive');
    expect(await page.getByLabel('Workspace ID').inputValue()).toBe(workspaceId);
    expect(await page.locator('tbody .badge').allTextContents()).toEqual(expected?.data.map(() => 'inactive'));
  });

  it('shows a designed empty state when no key matches', async () => {
    await page.getByLabel('Workspace ID').fill('wrkspc_nothing_here');
    await page.getByRole('button', { name: 'Apply filters' }).click();

    await page.getByText('No key matches these filters.').waitFor();
    await expectAccessible('the empty keys list');
    await page.getByRole('link', { name: 'Show every key' }).click();
    await page.waitForURL(consoleUrl);
  });

  it('shows an empty page reached through a cursor as such, with a link to the first page', async () => {
    const api = server.versionClient(LATEST_API_VERSION);
    let oldest: string | undefined;
    for (let more = true; more; ) {
      const query = { limit: 100, ...(oldest === undefined ? {} : { after_id: oldest }) };
      const { data } = await api.GET('/v1/organizations/api_keys', { params: { query } });
      oldest = data?.last_id ?? undefined;
      more = data?.has_more ?? false;
    }

    await page.goto(`${consoleUrl}?status=active&after_id=${oldest}`);
    await page.getByText('There are no keys on this page.').waitFor();
    expect(await page.getByText('This organization has no API keys yet.').count()).toBe(0);
    await expectAccessible('an empty page of the list');
    await page.getByRole('link', { name: 'Go to the first page' }).click();
    await page.waitForURL(`${consoleUrl}?status=active`);
    await rows().first().waitFor();
    await page.goto(consoleUrl);
    await rows().first().waitFor();
  });

  it('pages forwards and backwards through the cursors, with the page size and cursor in the URL', async () => {
    await page.getByLabel('Keys per page').selectOption('50');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/limit=50/);
    await expect.poll(async () => (await listedIds()).length).toBe(50);
    const first = await listedIds();

    await page.getByRole('link', { name: 'Next page' }).click();
    await page.waitForURL(/after_id=/);
    await expect.poll(async () => (await listedIds())[0]).not.toBe(first[0]);
    const second = await listedIds();
    expect(second).toHaveLength(50);
    expect(second.some((id) => first.includes(id))).toBe(false);
    expect(new URL(page.url()).searchParams.get('after_id')).toBe(first.at(-1));

    await page.getByRole('link', { name: 'Next page' }).click();
    await page.waitForURL(new RegExp(`after_id=${second.at(-1)}`));
    await expect.poll(async () => (await listedIds())[0]).not.toBe(second[0]);

    await page.getByRole('link', { name: 'Previous page' }).click();
    await page.waitForURL(/before_id=/);
    await expect.poll(listedIds).toEqual(second);
    await page.getByRole('link', { name: 'Previous page' }).click();
    await expect.poll(listedIds).toEqual(first);
    // The first page has no Previous link: the focus went to the new page rather than to nothing.
    await expect.poll(focused).toMatch(/^main /);
    await page.goBack();
    await expect.poll(listedIds).toEqual(second);
  });

  it('reaches every control of the list by keyboard, each with a visible focus', async () => {
    await page.goto(consoleUrl);
    await rows().first().waitFor();
    const reached: string[] = [];
    for (let step = 0; step < 16; step += 1) {
      await page.keyboard.press('Tab');
      const focused = await page.evaluate(() => {
        const element = document.activeElement;
        if (!element || element === document.body) {
          return null;
        }
        const style = getComputedStyle(element);
        // Form fields by their `name`, the scrolling table by its role, links and buttons by their text.
        const tag = element.tagName.toLowerCase();
        const name =
          tag === 'input' || tag === 'select'
            ? element.name
            : tag === 'section'
              ? 'table region'
              : (element.textContent?.trim() ?? '');
        return { name: `${tag} ${name}`, outline: style.outlineStyle };
      });
      if (focused) {
        reached.push(focused.name);
        expect(focused.outline, `focus outline of ${focused.name}`).not.toBe('none');
      }
    }
    expect(reached).toEqual(
      expect.arrayContaining([
        'a Skip to content',
        'a Keys',
        'a Create a key',
        'button Sign out',
        'select status',
        'input workspace_id',
        'input created_by_user_id',
        'input permission',
        'select limit',
        'button Apply filters',
        'section table region',
        'a Billing service',
      ]),
    );
  });

  it("opens a key's page with every field, and renames it inline, checked against the spec's length first", async () => {
    await page.goto(consoleUrl);
    await page.getByRole('link', { name: 'Billing service' }).click();
    await page.getByRole('heading', { name: 'Billing service', level: 1 }).waitFor();
    for (const field of ['ID', 'Status', 'Scope', 'Acts as', 'Created', 'Created by', 'Expires', 'Last used']) {
      await expect.poll(() => page.locator('dt', { hasText: new RegExp(`^${field}$`) }).count()).toBe(1);
    }
    await page.getByRole('table').waitFor();
    await expectAccessible("a key's page");
    await screenshot(page, 'key');

    const updates = () =>
      activity.requests.filter((url) => url.pathname === `/v1/organizations/api_keys/${named.billing}`).length;
    await page.getByRole('button', { name: 'Rename' }).click();
    const before = updates();
    const max = API_KEY_NAME_LENGTH.maximum;
    await page.getByLabel('New name').fill('x'.repeat(max + 1));
    await page.getByRole('button', { name: 'Save name' }).click();
    await page.getByText(`A name has at most ${max} characters; this one has ${max + 1}.`).waitFor();
    await page.getByLabel('New name').fill('');
    await page.getByRole('button', { name: 'Save name' }).click();
    await page.getByText('Enter a name.').waitFor();
    expect(updates()).toBe(before);

    await page.getByLabel('New name').fill('Billing service (2026)');
    await page.getByLabel('New name').press('Enter');
    await page.getByRole('heading', { name: 'Billing service (2026)', level: 1 }).waitFor();
    await page.locator('tbody td', { hasText: 'name: Billing service → Billing service (2026)' }).waitFor();
  });

  it('deactivates and reactivates the key, and archives it after a confirmation that says what archiving does', async () => {
    await page.getByRole('button', { name: 'Deactivate' }).click();
    await badge(/^inactive$/).waitFor();
    await page.getByRole('button', { name: 'Reactivate' }).click();
    await badge(/^active$/).waitFor();

    await page.getByRole('button', { name: 'Archive…' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.waitFor();
    expect(await dialog.textContent()).toContain('every request made with it is refused');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Cancel');
    await expectAccessible('the archive confirmation');
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    expect(await page.locator('dd .badge').textContent()).toBe('active');

    await page.getByRole('button', { name: 'Archive…' }).click();
    await dialog.getByRole('button', { name: 'Archive the key' }).click();
    await badge(/^archived$/).waitFor();
    await page.locator('tbody td', { hasText: 'status: active → archived' }).waitFor();
    expect(await page.getByRole('button', { name: 'Rotate the key' }).count()).toBe(0);
  });

  it('sets and removes an expiry, and shows the history of every change with its request ID', async () => {
    await page.goto(`${consoleUrl}/keys/${named.export}`);
    await page.getByLabel('Expires at (UTC)').fill('2031-01-31T12:00');
    await page.getByRole('button', { name: 'Set expiry' }).click();
    await page.locator('dd time', { hasText: '2031-01-31 12:00 UTC' }).waitFor();
    const expires = page.locator('.field-row', { has: page.locator('dt', { hasText: /^Expires$/ }) }).locator('dd');
    expect(await expires.textContent()).toBe('2031-01-31 12:00 UTC');
    await page.reload();
    expect(await page.getByLabel('Expires at (UTC)').inputValue()).toBe('2031-01-31T12:00');
    await page.getByRole('button', { name: 'Remove expiry' }).click();
    await expect.poll(() => expires.textContent()).toBe('Never');
    expect(await page.getByLabel('Expires at (UTC)').inputValue()).toBe('');

    await page.getByLabel('Expires at (UTC)').fill('2001-01-01T00:00');
    await page.getByRole('button', { name: 'Set expiry' }).click();
    await expect.poll(() => alert().textContent()).toContain('Changing the expiry failed');
    expect(await alert().textContent()).toContain('invalid_request_error');
    expect(await alert().getByTestId('request-id').textContent()).toMatch(/^req_/);

    await expect.poll(() => page.locator('.history tbody tr').count()).toBe(3);
    const events = await page.locator('.history tbody tr td:nth-child(2)').allTextContents();
    expect(events).toEqual(['api_key.updated', 'api_key.updated', 'api_key.created']);
    const requestIds = await page.locator('.history tbody tr td:last-child').allTextContents();
    expect(requestIds).toEqual(requestIds.map(() => expect.stringMatching(/^req_/)));
  });

  it('rotates a key with a grace period and shows the new secret once; leaving the page discards it', async () => {
    await page.goto(`${consoleUrl}/keys/${named.rotated}`);
    await page.getByLabel('Grace period').selectOption({ label: '1 day' });
    await page.getByRole('button', { name: 'Rotate the key' }).click();

    const secret = page.getByLabel('Secret', { exact: true });
    await secret.waitFor();
    const value = await secret.inputValue();
    expect(value).toMatch(/^sk-api-/);
    expect(await page.getByText('This is the only time the secret').count()).toBe(1);
    expect(await page.locator('dd .badge').textContent()).toBe('active');
    await expectAccessible('a rotated key');
    await screenshot(page, 'rotated', [secret]);

    const newKey = page.locator('.card a[href^="/console/keys/"]');
    const newId = await newKey.textContent();
    await newKey.click();
    await page.waitForURL(`${consoleUrl}/keys/${newId}`);
    await page.getByRole('heading', { name: 'Mobile app', level: 1 }).waitFor();
    // The new key has the old one's name, so its heading may still be the old page's: wait for the secret to go.
    await secret.waitFor({ state: 'detached' });
    expect(await page.getByLabel('Secret', { exact: true }).count()).toBe(0);
    expect(await page.locator('body').textContent()).not.toContain(value);
    expect(await page.evaluate(() => Object.values(window.sessionStorage))).toEqual([server.adminKey]);
  });

  it('creates a key: checks the name first, shows the secret once with a copy button, and forgets it on leaving', async () => {
    await page.getByRole('link', { name: 'Create a key' }).first().click();
    await page.getByRole('heading', { name: 'Create a key', level: 1 }).waitFor();
    await page.getByRole('button', { name: 'Create the key' }).click();
    await page.getByText('Enter a name.').waitFor();
    await expectAccessible('the creation form');

    await page.getByLabel('Name').fill('Support tool');
    await page.getByLabel('Expires at, UTC (optional)').fill('2030-06-30T00:00');
    await page.getByRole('button', { name: 'Create the key' }).click();
    const secret = page.getByLabel('Secret', { exact: true });
    await secret.waitFor();
    const value = await secret.inputValue();
    expect(value).toMatch(/^sk-api-/);
    expect(await page.getByText('It cannot be retrieved later').count()).toBe(1);
    await page.getByRole('button', { name: 'Copy' }).click();
    await page.getByText('Copied to the clipboard.').waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(value);
    await expectAccessible('a created key');
    await screenshot(page, 'created', [secret]);

    await page.getByRole('link', { name: 'Keys', exact: true }).click();
    await page.locator('tbody tr').first().getByText('Support tool').waitFor();
    await page.goBack();
    await page.getByRole('heading', { name: 'Create a key', level: 1 }).waitFor();
    expect(await page.getByLabel('Secret', { exact: true }).count()).toBe(0);
    expect(await page.locator('body').textContent()).not.toContain(value);
  });

  it("does a key's actions and creates a key from the keyboard only; the focus never falls to the page", async () => {
    await page.goto(`${consoleUrl}/keys/${named.keyboard}`);
    await page.getByRole('heading', { name: 'Keyboard key', level: 1 }).waitFor();

    await tabTo('button Rename');
    await page.keyboard.press('Enter');
    expect(await focused()).toBe('input New name');
    await page.keyboard.press('ControlOrMeta+A');
    await page.keyboard.type('Keyboard key (renamed)');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Keyboard key (renamed)', level: 1 }).waitFor();
    await expect.poll(focused).toBe('h1 Keyboard key (renamed)');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    expect(await focused()).toBe('input New name');
    await page.keyboard.press('Escape');
    await expect.poll(focused).toBe('button Rename');

    await tabTo('button Deactivate');
    await page.keyboard.press('Enter');
    await badge(/^inactive$/).waitFor();
    await expect.poll(focused).toBe('h2 Status');
    await tabTo('button Reactivate');
    await page.keyboard.press('Enter');
    await badge(/^active$/).waitFor();
    await expect.poll(focused).toBe('h2 Status');

    await tabTo('select Grace period');
    await page.keyboard.press('ArrowDown');
    expect(await page.getByLabel('Grace period').inputValue()).toBe('3600');
    await tabTo('button Rotate the key');
    await page.keyboard.press('Enter');
    await expect.poll(focused).toBe('h2 Rotated');

    // The old key works on through its grace period: archive it, through the dialog.
    await tabTo('button Archive…', { backwards: true });
    await page.keyboard.press('Enter');
    await page.getByRole('dialog').waitFor();
    expect(await focused()).toBe('button Cancel');
    await page.keyboard.press('Tab');
    expect(await focused()).toBe('button Archive the key');
    await page.keyboard.press('Enter');
    await badge(/^archived$/).waitFor();
    await expect.poll(focused).toBe('h2 Status');

    await tabTo('a Create a key', { backwards: true });
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Create a key', level: 1 }).waitFor();
    await expect.poll(focused).toMatch(/^main /);
    await tabTo('input Name');
    await page.keyboard.type('Made by keyboard');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Key created', level: 1 }).waitFor();
    await expect.poll(focused).toBe('h1 Key created');
    await tabTo('button Create another key');
    await page.keyboard.press('Enter');
    await expect.poll(focused).toBe('input Name');
  });

  it('shows a server error with its request ID, after the client has retried it', async () => {
    const failure = vi.spyOn(server.store, 'listApiKeys').mockRejectedValue(new Error('the disk is on fire'));
    const logged = server.logLines.length;
    const failed = activity.failedResponses.length;
    try {
      await page.goto(`${consoleUrl}?status=active`);
      await expect.poll(() => alert().textContent(), { timeout: STEP_TIMEOUT_MS }).toContain('internal server error');
      const requestId = await alert().getByTestId('request-id').textContent();
      expect(requestId).toMatch(/^req_/);
      const errors = server.logLines.slice(logged).filter((line) => line.includes('"status":500'));
      expect(errors.some((line) => line.includes(requestId as string))).toBe(true);
      // The client retried the 500s (its maxRetries) before the page showed the last one.
      expect(errors.length).toBeGreaterThan(1);
      expect(activity.failedResponses.slice(failed)).toEqual(errors.map(() => '500 GET /v1/organizations/api_keys'));
      expect(await alert().textContent()).not.toContain('disk');
      await expectAccessible('the keys list with an error');
    } finally {
      failure.mockRestore();
    }
    await page.getByRole('button', { name: 'Try again' }).click();
    await rows().first().waitFor();
  });

  it('answers an address it has no page for with a page that says so and leads back to the keys', async () => {
    await page.goto(`${consoleUrl}/no/such/page`);

    await page.getByRole('heading', { name: 'Page not found' }).waitFor();
    await expectAccessible('the page for an unknown address');
    await page.getByRole('link', { name: 'Go to the keys' }).click();
    await rows().first().waitFor();
  });

  it('fits a 360 px wide screen: no page scrolls sideways, only the tables inside their regions', async () => {
    await page.setViewportSize({ width: 360, height: 780 });
    try {
      for (const path of ['', `/keys/${named.export}`, '/keys/new']) {
        await page.goto(`${consoleUrl}${path}`);
        await page.locator('main h1').first().waitFor();
        await page.waitForLoadState('networkidle');
        expect(await page.evaluate(() => document.documentElement.scrollWidth), path || '/').toBeLessThanOrEqual(360);
        await expectAccessible(`${path || '/'} at 360 px`);
        if (path === '') {
          await screenshot(page, 'keys-narrow');
        }
      }
    } finally {
      await page.setViewportSize({ width: 1280, height: 900 });
    }
  });

  it('signs the tab out when the API refuses its key mid-session, and says why', async () => {
    const { adminKey, secret } = await server.store.createAdminKey({
      organizationId: DEFAULT_ORGANIZATION.id,
      name: 'disabled mid-session',
    });
    await page.goto(consoleUrl);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Admin key').fill(secret);
    await page.getByLabel('Admin key').press('Enter');
    await rows().first().waitFor();

    await server.store.setAdminKeyStatus(adminKey.id, 'disabled');
    await rows().first().getByRole('link').click();

    await expect.poll(() => alert().textContent()).toContain('You were signed out');
    expect(await alert().textContent()).toContain('authentication_error');
    expect(await alert().getByTestId('request-id').textContent()).toMatch(/^req_/);
    expect(await focused()).toBe('input Admin key');
    expect(await page.evaluate(() => window.sessionStorage.length)).toBe(0);
    await expectAccessible('the sign-in page after the API refused the key');

    await page.getByLabel('Admin key').fill(server.adminKey);
    await page.getByLabel('Admin key').press('Enter');
    await rows().first().waitFor();
    expect(await page.getByText('You were signed out').count()).toBe(0);
  });

  it('signs out: the key is gone from the tab, and the pages ask for one again', async () => {
    await page.goto(consoleUrl);
    await page.getByRole('button', { name: 'Sign out' }).click();

    await page.getByLabel('Admin key').waitFor();
    expect(await focused()).toBe('input Admin key');
    expect(await page.evaluate(() => window.sessionStorage.length)).toBe(0);
    await page.goto(`${consoleUrl}/keys/${named.export}`);
    await page.getByLabel('Admin key').waitFor();
    expect(await page.locator('body').textContent()).not.toContain('Nightly export');
  });

  it('sent every request to this server, broke no Content-Security-Policy rule, and threw nothing', async ({
    annotate,
  }) => {
    await annotate(`${activity.requests.length} requests`);

    expect(activity.aborted).toEqual([]);
    // Only the failures the tests caused: a wrong key, an expiry in the past, the server error with its retries, and
    // the key disabled mid-session.
    const retried = activity.failedResponses.filter((line) => line.startsWith('500 ')).length;
    expect(activity.failedResponses).toEqual([
      '401 GET /v1/organizations/api_keys',
      `400 POST /v1/organizations/api_keys/${named.export}`,
      ...Array.from({ length: retried }, () => '500 GET /v1/organizations/api_keys'),
      expect.stringMatching(/^401 GET \/v1\/organizations\/api_keys\/[^/]+$/),
    ]);
    expect(activity.requests.filter((url) => url.origin !== server.baseUrl)).toEqual([]);
    expect(activity.errors).toEqual([]);
  });
});
