// Where a dispatch runs in a cluster (PostgreSQL): the node that claims it owns it (runs its worktree, sessions, audit
// and delivery). A node claims only what it can run: the dispatch's repository in its workspaces, its worker's and
// auditor's harnesses, and a free coding-session slot. A dispatch that no node of the cluster could ever run is refused.
import { resolve } from 'node:path';
import type { Claimant } from '../../store/linear-dispatch-types.ts';

/** What placement needs to know of a dispatch. */
export interface PlacedDispatch {
  repoPath: string;
  harness: string;
  auditHarness: string;
}

/** A node as the cluster lists it (cluster_nodes): its name, workspace roots and harnesses. */
export interface PlacementNode {
  name: string;
  workspaces: readonly string[];
  harnesses: readonly string[];
}

/** The pipeline's part in a cluster: this node as a claimant, and the cluster's nodes for the refusal check. */
export interface DispatchPlacement {
  /** This node and what it can run. */
  claimant: Claimant;
  /** This node's `maxSessions` (its coding sessions of every kind count against it). */
  maxSessions: number;
  /** Every node the cluster knows (up or not: a node that is down now may come back). */
  nodes(): Promise<readonly PlacementNode[]>;
}

/** True when `path` is `root` or lies inside it (both absolute). */
function within(path: string, root: string): boolean {
  const r = resolve(root);
  const p = resolve(path);
  return p === r || p.startsWith(r.endsWith('/') ? r : `${r}/`);
}

/** Why `node` cannot run `d` (first reason), or null when it can. */
export function cannotRun(node: PlacementNode, d: PlacedDispatch): string | null {
  if (!node.workspaces.some((w) => within(d.repoPath, w))) return `${d.repoPath} is not in its workspaces`;
  for (const harness of new Set([d.harness, d.auditHarness]))
    if (!node.harnesses.includes(harness)) return `it has no ${harness} harness`;
  return null;
}

/**
 * Why no node of `nodes` could ever run `d` (told to the user as is), or null when one can. Every node is named with
 * its reason, so the user sees what to change (a workspace, a harness).
 */
export function refusalFor(nodes: readonly PlacementNode[], d: PlacedDispatch): string | null {
  const reasons: string[] = [];
  for (const node of nodes) {
    const why = cannotRun(node, d);
    if (why === null) return null;
    reasons.push(`${node.name}: ${why}`);
  }
  const detail = reasons.length > 0 ? ` (${reasons.join('; ')})` : ' (no node has joined the cluster)';
  return `No node of the cluster can run this dispatch: it needs ${d.repoPath} in a node's workspaces and the ${d.harness}${d.auditHarness === d.harness ? '' : ` and ${d.auditHarness}`} harness${detail}.`;
}
