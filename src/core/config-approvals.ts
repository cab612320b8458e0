// Config of approvals: how long a request waits for a person, which rules decide before anyone is asked, and whether
// the orchestrator agent may decide. Rules use Claude Code's permission-rule syntax (src/approvals/rule-syntax.ts).
import { z } from 'zod';
import { parseRule } from '../approvals/rule-syntax.ts';

const ruleText = z
  .string()
  .min(1)
  .superRefine((text, ctx) => {
    try {
      parseRule(text);
    } catch (error) {
      ctx.addIssue({ code: 'custom', message: error instanceof Error ? error.message : String(error) });
    }
  });

/** A rule for every workspace root (`"Bash(git status:*)"`), or for one (`{ "rule": "Read", "root": "/srv/repo" }`). */
const configRule = z.union([ruleText, z.strictObject({ rule: ruleText, root: z.string().min(1) })]);

/** The `approvals` config section. */
export const approvalsSchema = z.strictObject({
  /** An unanswered request is denied after this many minutes ("no answer within …"), and the person is told. */
  timeoutMinutes: z.number().positive().default(30),
  /** Rules that allow a tool call before anyone is asked (deny rules are applied first). */
  autoAllow: z.array(configRule).default([]),
  /** Rules that deny a tool call before anyone is asked. */
  autoDeny: z.array(configRule).default([]),
  /**
   * Whether the orchestrator agent may decide approvals (through the same operations, recorded as `agent:<session>`).
   * Off by default: a prompt-injected orchestrator must not approve its own workers' commands.
   */
  agentMayDecide: z.boolean().default(false),
});

/** The parsed `approvals` section. */
export type ApprovalsConfig = z.infer<typeof approvalsSchema>;
