import { z } from 'zod';
import type { SessionListing } from '../store/coding-session-listings.ts';
import type { OperationContext } from './operation.ts';
import type { SessionSummary } from './session-summary.ts';
import { summarize } from './session-summary.ts';

/** A session reference: our id, the session name, or the agent's own session id. */
export const sessionRef = z.string().trim().min(1, 'give a session id, name, or agent session id');

/** A working directory to run in: absolute (or starting with ~/), inside a configured workspace. */
export const workdirParam = z
  .string()
  .trim()
  .min(1)
  .describe('absolute working directory (or ~/…), inside a configured workspace');

/** The agent's model for a session or turn. */
export const modelParam = z
  .string()
  .trim()
  .min(1)
  .describe("the agent's model (default: defaultModel from the config, else the agent's own)");

/** The summary of a stored session as seen now. */
export function summaryOf(ctx: OperationContext, record: SessionListing): SessionSummary {
  return summarize(record, ctx.services.sessions.liveById(record.id), ctx.services.clock.now());
}
