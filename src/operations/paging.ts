// Paging of every list operation: `limit` and `cursor` inputs, newest first, and a result that names the next cursor.
import { z } from 'zod';

/** Items per page unless the caller asks otherwise. */
export const DEFAULT_PAGE_LIMIT = 50;
/** The largest page a caller may ask for. */
export const MAX_PAGE_LIMIT = 500;

/** The input fields every paged list accepts. */
export const pageFields = {
  limit: z
    .number()
    .int()
    .min(1)
    .max(MAX_PAGE_LIMIT)
    .default(DEFAULT_PAGE_LIMIT)
    .describe(`items per page, newest first (default ${DEFAULT_PAGE_LIMIT}, at most ${MAX_PAGE_LIMIT})`),
  cursor: z.string().trim().min(1).optional().describe('the nextCursor of the previous page, to get the page after it'),
};

/** The line a formatted page ends with when more pages follow (empty on the last page). */
export function moreLine(nextCursor: string | null): string {
  return nextCursor ? `\n\n… more: ask again with cursor ${nextCursor}` : '';
}
