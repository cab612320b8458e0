// Config of the Linear dispatch pipeline (worker → audit → verdict), its watchdog and its concurrency cap.
import { z } from 'zod';

export const linearPipelineSchema = z.strictObject({
  /** Worker attempts before an issue is marked stuck. */
  maxAttempts: z.number().int().positive().default(3),
});
