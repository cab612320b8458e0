// GET /healthz: anyone may ask whether the daemon is alive; only the gateway token's holder sees the details (version,
// uptime, sessions, delivery and wake counters), which name sessions and carry error texts.
import type { FastifyInstance } from 'fastify';
import type { Clock } from '../core/clock.ts';
import { bearerMatches } from './auth.ts';

/** What /healthz reports from. */
export interface HealthzDeps {
  /** The gateway token (`Authorization: Bearer <token>` unlocks the details). */
  token: string;
  version: string;
  startedAt: number;
  clock: Clock;
  /** How many coding sessions are active. */
  activeSessions: () => number;
  /** Extra figures (delivery and wake counters). */
  extra?: () => Record<string, unknown> | Promise<Record<string, unknown>>;
}

/** What anyone may see: the daemon is alive, and it is a switchboard daemon (so `start` can say who holds a port). */
export const ANONYMOUS_HEALTH = { ok: true, service: 'switchboard' } as const;

/** Registers GET /healthz: `ANONYMOUS_HEALTH` for anyone; with the gateway token, the details too. */
export function registerHealthz(app: FastifyInstance, deps: HealthzDeps): void {
  app.get('/healthz', async (request, reply) => {
    reply.header('cache-control', 'no-store');
    if (!bearerMatches(request.headers.authorization, deps.token)) return ANONYMOUS_HEALTH;
    return {
      ...ANONYMOUS_HEALTH,
      version: deps.version,
      uptimeMs: deps.clock.now() - deps.startedAt,
      activeSessions: deps.activeSessions(),
      ...(await deps.extra?.()),
    };
  });
}
