import { CliError } from './cli-error.ts';

/**
 * Checks a daemon URL someone typed (`--url`, `$SWITCHBOARD_URL`): an http(s) URL with a host. Anything else is bad
 * input (exit code 2) naming where it came from, not a daemon that "is not running".
 */
export function daemonUrl(raw: string, source: string): string {
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new CliError(`${source} "${raw}" is not a URL (expected e.g. http://127.0.0.1:18789)`, 2);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new CliError(`${source} "${raw}": expected an http:// or https:// URL (e.g. http://127.0.0.1:18789)`, 2);
  }
  if (parsed.hostname === '') throw new CliError(`${source} "${raw}": the URL has no host`, 2);
  if (parsed.search !== '' || parsed.hash !== '') {
    throw new CliError(`${source} "${raw}": the daemon URL takes no query or fragment`, 2);
  }
  return raw;
}
