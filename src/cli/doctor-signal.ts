// `doctor`'s checks of the Signal connector: per configured account, is signal-cli's HTTP daemon reachable
// (GET /api/v1/check), does it hold the configured number (JSON-RPC listAccounts, in its multi-account mode), and may
// anyone talk to the bot (allowedNumbers)?
import { accountKey, accountsOf } from '../core/config-accounts.ts';
import type { SignalChannelConfig } from '../core/config-signal.ts';
import { errorMessage } from '../core/errors.ts';
import type { Check } from './doctor.ts';

/** One check per Signal account of an enabled `channels.signal`; none when it is disabled. */
export async function signalChecks(section: SignalChannelConfig, timeoutMs = 3_000): Promise<Check[]> {
  if (!section.enabled) return [];
  const checks: Check[] = [];
  for (const { account, config } of accountsOf(section)) {
    const label = account ? `Signal (${account})` : 'Signal';
    const key = accountKey('signal', account);
    try {
      const check = await fetch(new URL('/api/v1/check', config.url), { signal: AbortSignal.timeout(timeoutMs) });
      await check.body?.cancel();
      if (!check.ok) throw new Error(`GET /api/v1/check answered HTTP ${check.status}`);
    } catch (error) {
      checks.push({
        status: 'fail',
        label,
        detail: `signal-cli daemon not reachable at ${config.url} (${key}.url; run \`signal-cli daemon --http\`): ${errorMessage(error)}`,
      });
      continue;
    }
    const numbers = config.account ? await listAccounts(config.url, timeoutMs) : null;
    if (config.account && numbers && !numbers.includes(config.account)) {
      checks.push({
        status: 'fail',
        label,
        detail: `signal-cli at ${config.url} has no account ${config.account} (${key}.account); it has: ${numbers.join(', ') || 'none'}`,
      });
      continue;
    }
    checks.push(
      config.allowedNumbers.length > 0
        ? {
            status: 'ok',
            label,
            detail: `signal-cli at ${config.url}${config.account ? ` serves ${config.account}` : ''}; ${config.allowedNumbers.length} allowed number(s)`,
          }
        : { status: 'warn', label, detail: `${key}.allowedNumbers is empty: the bot refuses everyone` },
    );
  }
  return checks;
}

/** The numbers a multi-account daemon serves; null when it does not say (single-account mode, an error). */
async function listAccounts(url: string, timeoutMs: number): Promise<string[] | null> {
  try {
    const response = await fetch(new URL('/api/v1/rpc', url), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'listAccounts' }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const reply = (await response.json()) as { result?: unknown };
    if (!Array.isArray(reply.result)) return null;
    return reply.result
      .map((entry: unknown) =>
        typeof entry === 'object' && entry !== null && 'number' in entry ? String(entry.number) : null,
      )
      .filter((n): n is string => n !== null);
  } catch {
    return null;
  }
}
