// Config section of the Linear integration: API access, OAuth, webhooks (config-linear-pipeline.ts: the pipeline).
import { z } from 'zod';
import { linearPipelineSchema } from './config-linear-pipeline.ts';

export const linearSchema = z.strictObject({
  enabled: z.boolean().default(false),
  pipeline: linearPipelineSchema.prefault({}),
});
