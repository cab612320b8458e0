// Config section of the Linear integration.
import { z } from 'zod';

export const linearSchema = z.strictObject({
  enabled: z.boolean().default(false),
});
