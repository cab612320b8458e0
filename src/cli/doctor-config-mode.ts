// The doctor's check of config.json5's permissions: the file may hold bot tokens and API keys, so it should be the
// owner's alone. The daemon does not change the user's file; it only says so.
import { statSync } from 'node:fs';
import { errorMessage } from '../core/errors.ts';
import type { Check } from './doctor.ts';

/**
 * A warning when the config file at `path` can be read or written by its group or by other users, an ok line when it
 * is owner-only, and nothing when there is no file (`found` false).
 */
export function configModeChecks(path: string, found: boolean): Check[] {
  if (!found) return [];
  const label = 'Config permissions';
  let mode: number;
  try {
    mode = statSync(path).mode & 0o777;
  } catch (error) {
    return [{ status: 'warn', label, detail: `cannot read the mode of ${path}: ${errorMessage(error)}` }];
  }
  const octal = mode.toString(8).padStart(4, '0');
  if ((mode & 0o077) === 0) return [{ status: 'ok', label, detail: `${path} is owner-only (${octal})` }];
  const can = [mode & 0o044 ? 'read' : '', mode & 0o022 ? 'write' : ''].filter(Boolean).join(' and ');
  const who = [mode & 0o070 ? 'its group' : '', mode & 0o007 ? 'every other user' : ''].filter(Boolean).join(' and ');
  const what = can ? `${who} can ${can} it` : `${who} has access to it`;
  return [
    {
      status: 'warn',
      label,
      detail: `${path} is ${octal}: ${what}, and it may hold tokens and keys; run chmod 600 ${path}`,
    },
  ];
}
