// The plan audit: a pure, deterministic completeness check of a project's issues (no model involved). It checks
// descriptions, estimates and priorities, cycles in the blocking graph (Kahn's algorithm) and orphans.
import type { LinearIssue } from '../api/types.ts';

/** What the audit reads of an issue (a LinearIssue fits). */
export type PlanIssue = Pick<
  LinearIssue,
  'id' | 'identifier' | 'title' | 'description' | 'estimate' | 'priority' | 'parentId' | 'labels' | 'relations'
>;

export type AuditCheck = 'description' | 'estimate' | 'priority' | 'cycle' | 'orphan';

/** One failed check and the issues (identifiers) it concerns. */
export interface AuditFinding {
  check: AuditCheck;
  issues: string[];
  message: string;
}

export interface AuditResult {
  pass: boolean;
  findings: AuditFinding[];
  /** Identifiers of the issues counted as epics (they have sub-issues or an "Epic" label). */
  epics: string[];
  checked: number;
}

export interface AuditOptions {
  /** Shortest acceptable description (the seed: 50). */
  minDescriptionChars: number;
}

/** An epic has sub-issues in the plan, or a label named "Epic". */
export function epicIds(issues: readonly PlanIssue[]): Set<string> {
  const ids = new Set(issues.map((i) => i.id));
  const epics = new Set<string>();
  for (const issue of issues) {
    if (issue.parentId && ids.has(issue.parentId)) epics.add(issue.parentId);
    if (issue.labels.some((l) => l.name.trim().toLowerCase() === 'epic')) epics.add(issue.id);
  }
  return epics;
}

/**
 * The blocking edges between the given issues, `from` must be done before `to`: "A blocks B" and "B blocked_by A"
 * both give A → B (Linear reports a relation on both sides; each edge is counted once).
 */
export function blockingEdges(issues: readonly PlanIssue[]): [string, string][] {
  const ids = new Set(issues.map((i) => i.id));
  const seen = new Set<string>();
  const edges: [string, string][] = [];
  const add = (from: string, to: string): void => {
    const key = `${from}>${to}`;
    if (!ids.has(from) || !ids.has(to) || seen.has(key)) return;
    seen.add(key);
    edges.push([from, to]);
  };
  for (const issue of issues) {
    for (const r of issue.relations) {
      if (r.type === 'blocks') add(issue.id, r.relatedIssueId);
      else if (r.type === 'blocked_by') add(r.relatedIssueId, issue.id);
    }
  }
  return edges;
}

/**
 * The issues on a cycle of the blocking graph, by Kahn's algorithm: repeatedly remove issues nothing blocks; what
 * remains is on a cycle or downstream of one, then issues that block nothing remaining are trimmed the same way
 * backwards, leaving the cycles (and paths between cycles). Empty when the graph is a DAG.
 */
export function cycleMembers(nodes: readonly string[], edges: readonly [string, string][]): string[] {
  const remaining = new Set(nodes);
  const peel = (forward: boolean): void => {
    const degree = new Map<string, number>([...remaining].map((n) => [n, 0]));
    for (const [from, to] of edges) {
      if (!remaining.has(from) || !remaining.has(to)) continue;
      const target = forward ? to : from;
      degree.set(target, (degree.get(target) ?? 0) + 1);
    }
    const queue = [...remaining].filter((n) => degree.get(n) === 0);
    while (queue.length > 0) {
      const node = queue.shift() as string;
      remaining.delete(node);
      for (const [from, to] of edges) {
        const [source, target] = forward ? [from, to] : [to, from];
        if (source !== node || !remaining.has(target)) continue;
        const d = (degree.get(target) ?? 0) - 1;
        degree.set(target, d);
        if (d === 0) queue.push(target);
      }
    }
  };
  peel(true);
  peel(false);
  return nodes.filter((n) => remaining.has(n));
}

/** Runs every check over the project's issues. Pure: the same issues always give the same result. */
export function auditPlan(issues: readonly PlanIssue[], options: AuditOptions): AuditResult {
  const epics = epicIds(issues);
  const ids = new Set(issues.map((i) => i.id));
  const ident = new Map(issues.map((i) => [i.id, i.identifier]));
  const findings: AuditFinding[] = [];
  const push = (check: AuditCheck, list: PlanIssue[], message: (names: string) => string): void => {
    if (list.length === 0) return;
    const names = list.map((i) => i.identifier);
    findings.push({ check, issues: names, message: message(names.join(', ')) });
  };
  push(
    'description',
    issues.filter((i) => i.description.trim().length < options.minDescriptionChars),
    (n) =>
      `Descriptions shorter than ${options.minDescriptionChars} characters: ${n}. Say what is to be done and how to tell it is done.`,
  );
  const work = issues.filter((i) => !epics.has(i.id));
  push(
    'estimate',
    work.filter((i) => i.estimate === null),
    (n) => `Issues without an estimate: ${n}.`,
  );
  push(
    'priority',
    work.filter((i) => !(i.priority > 0)),
    (n) => `Issues without a priority (1 urgent … 4 low): ${n}.`,
  );
  const edges = blockingEdges(issues);
  const cyclic = cycleMembers(
    issues.map((i) => i.id),
    edges,
  );
  if (cyclic.length > 0) {
    const names = cyclic.map((id) => ident.get(id) ?? id);
    findings.push({
      check: 'cycle',
      issues: names,
      message: `The blocking relations form a cycle through ${names.join(', ')}; no order can satisfy them.`,
    });
  }
  const hasChildren = new Set(issues.filter((i) => i.parentId && ids.has(i.parentId)).map((i) => i.parentId as string));
  const linked = new Set<string>();
  for (const issue of issues) {
    for (const r of issue.relations) {
      linked.add(issue.id);
      if (ids.has(r.relatedIssueId)) linked.add(r.relatedIssueId);
    }
  }
  push(
    'orphan',
    issues.filter((i) => !i.parentId && !hasChildren.has(i.id) && !linked.has(i.id)),
    (n) => `Orphan issues (no parent, no sub-issues, no relation): ${n}. Put them under an epic or link them.`,
  );
  return {
    pass: findings.length === 0,
    findings,
    epics: issues.filter((i) => epics.has(i.id)).map((i) => i.identifier),
    checked: issues.length,
  };
}

/** The findings as a Markdown list, or a line saying the plan passed. */
export function formatAudit(result: AuditResult): string {
  if (result.pass) return `The plan passes the audit (${result.checked} issues, ${result.epics.length} epics).`;
  return result.findings.map((f) => `- **${f.check}**: ${f.message}`).join('\n');
}
