// The one check of an operation's declared `needs`: the `run` that defineOperation builds asks here before the
// operation's own code runs, so every surface (RPC, chat command, tool, and the CLI through RPC) gets the same answer
// and no operation checks its services itself. The engine's toolbox asks `canRun` to leave such tools out.
import { AppError } from '../core/errors.ts';
import type { Operation, OperationServices, ServiceName, ServicesWith } from './operation.ts';

/** What a caller is told when a service an operation needs is not running in this daemon. */
export const MISSING_SERVICE: Record<ServiceName, string> = {
  engine: 'the agent engine is not running',
  scheduler: 'the scheduler is not running in this daemon (cron tasks and the heartbeat are unavailable)',
  wake: 'the wake router is not running in this daemon',
  linear: 'the Linear integration is not running (linear.enabled is false)',
  codeRunner: 'code_run is not available in this daemon',
  idempotency: 'idempotency keys are not available in this daemon',
  approvals: 'approvals are not available in this daemon',
  github: 'the GitHub integration is not running (github.enabled is false)',
  cluster: 'the cluster view is not available in this daemon',
  clusterSessions: 'this daemon is not a node of a cluster on PostgreSQL (store.url)',
};

/** The first of `needs` that `services` lacks, or undefined when all are there. */
export function missingService(needs: readonly ServiceName[], services: OperationServices): ServiceName | undefined {
  return needs.find((name) => services[name] === undefined);
}

function hasAll<N extends ServiceName>(needs: readonly N[], services: OperationServices): services is ServicesWith<N> {
  return missingService(needs, services) === undefined;
}

/** The services, seen as holding all of `needs`, or an `unavailable` error naming the first missing one. */
export function servicesFor<N extends ServiceName>(needs: readonly N[], services: OperationServices): ServicesWith<N> {
  if (hasAll(needs, services)) return services;
  const missing = missingService(needs, services) as ServiceName;
  throw new AppError('unavailable', MISSING_SERVICE[missing]);
}

/** True when every service `op` needs is present: the engine's toolbox offers only such tools. */
export function canRun(op: Operation, services: OperationServices): boolean {
  return missingService(op.needs ?? [], services) === undefined;
}
