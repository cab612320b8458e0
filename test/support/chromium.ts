// Debian's Chromium for the browser tests (driven through playwright-core), and the flags that keep it off the network.

/** Where Debian's chromium package puts the browser. */
export const CHROMIUM = '/usr/bin/chromium';

/** Flags that keep Chromium off the network: without the background-networking ones it dials out and is refused. */
export const CHROMIUM_ARGS = [
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
