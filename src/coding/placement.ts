// Where a launch may run in the cluster: a node named by `on` (if given) that has the harness, every requested label
// and a workspace holding the workdir. A launch no node of the cluster (up or down) could ever run is refused at once.
import { resolve } from 'node:path';
import type { HarnessName } from '../core/config.ts';
import { expandHome } from '../core/config-load.ts';
import type { AppError } from '../core/errors.ts';
import { invalidInput } from '../core/errors.ts';
import type { NodeRecord } from '../store/cluster-nodes.ts';
import { isInside } from './workspace.ts';

/** What a launch asks of its node. */
export interface PlacementAsk {
  harness: HarnessName;
  /** Absolute. */
  workdir: string;
  on?: string;
  labels?: readonly string[];
}

/** True when `node` could run the launch (whether it is up or has a free slot aside). */
export function nodeCanRun(
  node: Pick<NodeRecord, 'name' | 'labels' | 'harnesses' | 'workspaces'>,
  ask: PlacementAsk,
): boolean {
  return (
    (ask.on === undefined || ask.on === node.name) &&
    node.harnesses.includes(ask.harness) &&
    (ask.labels ?? []).every((l) => node.labels.includes(l)) &&
    node.workspaces.some((root) => isInside(resolve(expandHome(root)), ask.workdir))
  );
}

/**
 * Why no node of `nodes` could ever run the launch (an invalid_input error naming the first constraint none meets), or
 * null when one could.
 */
export function placementRefusal(nodes: readonly NodeRecord[], ask: PlacementAsk): AppError | null {
  let fit = [...nodes];
  const where = ask.on === undefined ? 'no node of the cluster' : `node ${ask.on}`;
  if (ask.on !== undefined) {
    fit = fit.filter((n) => n.name === ask.on);
    if (fit.length === 0)
      return invalidInput(
        `on: no node named "${ask.on}" in the cluster (nodes: ${nodes.map((n) => n.name).join(', ') || 'none'})`,
        'on',
      );
  }
  fit = fit.filter((n) => n.harnesses.includes(ask.harness));
  if (fit.length === 0) return invalidInput(`harness: ${where} can run the ${ask.harness} harness`, 'harness');
  const labels = ask.labels ?? [];
  fit = fit.filter((n) => labels.every((l) => n.labels.includes(l)));
  if (fit.length === 0)
    return invalidInput(
      `labels: ${where} with the ${ask.harness} harness has the labels ${labels.join(', ')}`,
      'labels',
    );
  fit = fit.filter((n) => nodeCanRun(n, ask));
  if (fit.length === 0)
    return invalidInput(
      `workdir: ${where} that could run it holds ${ask.workdir} in its workspaces (see \`switchboard nodes\`)`,
      'workdir',
    );
  return null;
}
