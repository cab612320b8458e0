import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { enforceMode, PRIVATE_FILE_MODE, writePrivateFile } from '../core/private-files.ts';

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
