import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { enforceMode, PRIVATE_FILE_MODE, writePrivateFile } from '../core/private-files.ts';
import type { ClusterSecretStore } from './cluster-secrets.ts';

/** File name of a token under the state directory. */
export type TokenName = 'gateway.token' | 'hooks.token' | 'web.token';

/**
 * Returns the token stored at `<home>/<name>`, creating it (32 random bytes, hex, mode 0600) on first use.
 * A token file readable by others is tightened to 0600.
 */
export function ensureToken(home: string, name: TokenName = 'gateway.token'): string {
  const path = join(home, name);
  if (existsSync(path)) {
    enforceMode(path, PRIVATE_FILE_MODE);
    const token = readFileSync(path, 'utf8').trim();
    if (token.length >= 16) return token;
  }
  const token = randomBytes(32).toString('hex');
  writePrivateFile(path, `${token}\n`);
  return token;
}

/** Reads an existing token without creating one; undefined when there is none. */
export function readToken(home: string, name: TokenName = 'gateway.token'): string | undefined {
  try {
    return readFileSync(join(home, name), 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

/**
 * A token every node of a cluster shares: the one in the database (`cluster_secrets`, made by the first node to ask),
 * also written to `<home>/<name>` (0600) so this machine's CLI finds it as it finds a local token.
 */
export async function sharedToken(
  home: string,
  name: TokenName,
  secrets: ClusterSecretStore,
  now: number,
): Promise<string> {
  const token = await secrets.ensure(name, now);
  if (readToken(home, name) !== token) writePrivateFile(join(home, name), `${token}\n`);
  return token;
}
