// Debian's Chromium for the browser tests (driven through playwright-core), and the flags that keep it off the network.
import type { Browser, BrowserContextOptions, Page } from 'playwright-core';
import { chromium } from 'playwright-core';

/** Where Debian's chromium package puts the browser. */
const CHROMIUM = '/usr/bin/chromium';

/** Flags that keep Chromium off the network: without the background-networking ones it dials out and is refused. */
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** The `skip` of a browser test: false when Chromium is installed, else why the test cannot run. */
export function chromiumSkip(exists: (path: string) => boolean): false | string {
  return exists(CHROMIUM)
    ? false
    : `${CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium) to run the browser test`;
}

/** Launches Debian's Chromium headless, off the network. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
}

/**
 * Opens the web page at `url` in a new context of `browser` (a 1280×900 desktop unless `context` says otherwise),
 * collecting page errors and console errors into `problems`, and waits until it shows it is connected.
 */
export async function openWebPage(
  browser: Browser,
  url: string,
  problems: string[],
  context: BrowserContextOptions = { viewport: { width: 1280, height: 900 } },
): Promise<Page> {
  const page = await (await browser.newContext(context)).newPage();
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console error: ${message.text()}`);
  });
  await page.goto(url);
  await page.locator('#conn', { hasText: 'connected' }).waitFor();
  return page;
}
