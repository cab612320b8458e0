// Which hosts are this machine's loopback: the gateway refuses to listen elsewhere unless told to, and the CLI treats a
// daemon reached there as one on this machine.

const LOOPBACK = new Set(['127.0.0.1', '::1', '[::1]', 'localhost']);

/** True when `host` (a listen address, or a URL's hostname) is on the loopback interface. */
export function isLoopback(host: string): boolean {
  return LOOPBACK.has(host) || host.startsWith('127.');
}
