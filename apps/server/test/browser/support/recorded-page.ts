import { existsSync } from 'node:fs';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';

/** Debian's chromium, as .ci/run installs it (see TOOLCHAIN.md). No fallback and no skip: CI must run the tests. */
const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

/** Launches Debian's chromium; fails, naming the package to install, when it is missing. */
export async function launchChromium(timeoutMs: number): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (.ci/run installs it)`);
  }
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, timeout: timeoutMs });
}

/** What a page did while it loaded and was used. */
export interface PageActivity {
  requests: URL[];
  /** Requests to another origin, aborted before they left. */
  aborted: string[];
  /**
   * Every response of 400 or more, as `401 GET /v1/organizations/api_keys` (the path without its query), and every
   * request that failed without a response, as `net::ERR_... GET <url>`.
   */
  failedResponses: string[];
  /** Console errors (Chromium reports Content-Security-Policy violations there) and uncaught exceptions. */
  errors: string[];
}

/**
 * Opens a page, in a context of its own, that records its activity and aborts every request that is not for
 * `origin`. A load cancelled (`net::ERR_ABORTED`: the test navigated before the icon loaded, or the app aborted its
 * fetch, as TanStack Query does when a page is left) is not recorded as a failure; nor is Chromium's console line
 * for a failed response, which `failedResponses` records.
 */
export async function openRecordedPage(
  browser: Browser,
  origin: string,
  {
    timeoutMs,
    viewport = { width: 1280, height: 900 },
  }: { timeoutMs: number; viewport?: { width: number; height: number } },
): Promise<{ context: BrowserContext; page: Page; activity: PageActivity }> {
  const context = await browser.newContext({ viewport });
  const activity: PageActivity = { requests: [], aborted: [], failedResponses: [], errors: [] };
  await context.route('**/*', (route) => {
    const url = route.request().url();
    if (new URL(url).origin === origin) {
      return route.continue();
    }
    activity.aborted.push(url);
    return route.abort('blockedbyclient');
  });
  const page = await context.newPage();
  page.setDefaultTimeout(timeoutMs);
  page.on('request', (request) => activity.requests.push(new URL(request.url())));
  page.on('response', (response) => {
    if (response.status() >= 400) {
      const { pathname } = new URL(response.url());
      activity.failedResponses.push(`${response.status()} ${response.request().method()} ${pathname}`);
    }
  });
  page.on('requestfailed', (request) => {
    const error = request.failure()?.errorText;
    if (error !== 'net::ERR_ABORTED') {
      activity.failedResponses.push(`${error} ${request.method()} ${request.url()}`);
    }
  });
  page.on('console', (message) => {
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) {
      activity.errors.push(message.text());
    }
  });
  page.on('pageerror', (error) => activity.errors.push(error.message));
  return { context, page, activity };
}
