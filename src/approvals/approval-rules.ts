// Which rule, if any, decides a tool call before anyone is asked: deny rules first (config, then stored), then allow
// rules (config, the workspace's "Always" rules, the session's "Allow for session" rules).
import { isInside } from '../coding/workspace.ts';
import type { ApprovalsConfig } from '../core/config-approvals.ts';
import type { StoredRule } from '../store/approvals.ts';
import type { PermissionRule } from './rule-syntax.ts';
import { parseRule, ruleMatches } from './rule-syntax.ts';

/** A rule ready to match: its stored form and its parsed form. */
export interface ActiveRule {
  rule: StoredRule;
  parsed: PermissionRule;
}

/** The tool call a rule is matched against. */
export interface RuleCall {
  tool: string;
  input: unknown;
  /** The session's working directory (relative path patterns are relative to it). */
  workdir: string;
}

/** The rules of `approvals.autoAllow` / `autoDeny` as stored-rule records (ids `config:allow:<n>`, never removable). */
export function configRules(config: Pick<ApprovalsConfig, 'autoAllow' | 'autoDeny'>): ActiveRule[] {
  const out: ActiveRule[] = [];
  const add = (entries: ApprovalsConfig['autoAllow'], behavior: 'allow' | 'deny'): void => {
    entries.forEach((entry, index) => {
      const text = typeof entry === 'string' ? entry : entry.rule;
      const root = typeof entry === 'string' ? null : entry.root;
      out.push({
        rule: {
          id: `config:${behavior}:${index}`,
          rule: text,
          behavior,
          root,
          source: 'config',
          createdAt: 0,
          sessionId: null,
        },
        parsed: parseRule(text),
      });
    });
  };
  add(config.autoDeny, 'deny');
  add(config.autoAllow, 'allow');
  return out;
}

/** Parses stored rules; a rule stored by an older version that no longer parses is skipped (never matches). */
export function activeRules(rules: readonly StoredRule[]): ActiveRule[] {
  const out: ActiveRule[] = [];
  for (const rule of rules) {
    try {
      out.push({ rule, parsed: parseRule(rule.rule) });
    } catch {
      // An unparsable rule decides nothing; it stays listed so a person can remove it.
    }
  }
  return out;
}

/** The first rule that decides `call` (deny rules before allow rules), or undefined when a person must be asked. */
export function decidingRule(rules: readonly ActiveRule[], call: RuleCall): StoredRule | undefined {
  // A deny rule catches a compound command when any part matches; an allow rule only when every part does.
  const applies = (active: ActiveRule): boolean =>
    (active.rule.root === null || isInside(active.rule.root, call.workdir)) &&
    ruleMatches(active.parsed, { tool: call.tool, input: call.input, cwd: call.workdir }, active.rule.behavior);
  return (
    rules.find((r) => r.rule.behavior === 'deny' && applies(r))?.rule ??
    rules.find((r) => r.rule.behavior === 'allow' && applies(r))?.rule
  );
}
