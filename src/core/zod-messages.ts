// Zod's messages as every surface words them, set once for the process when core/errors.ts (which every surface
// imports) loads: a value left out is "required", with what it should be, instead of zod's "Invalid input: expected
// string, received undefined". A schema's own message still wins.
import type { z } from 'zod';
import { config } from 'zod';

/** The message of an issue about a value left out, else undefined (zod's own message). */
export function requiredMessage(issue: z.core.$ZodRawIssue): string | undefined {
  if (issue.input !== undefined) return undefined;
  if (issue.code === 'invalid_type') return `required (${issue.expected})`;
  if (issue.code === 'invalid_value')
    return `required (one of ${issue.values.map((value) => JSON.stringify(value)).join(', ')})`;
  return undefined;
}

config({ customError: requiredMessage });
