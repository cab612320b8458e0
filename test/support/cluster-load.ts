// Load drivers for chaos tests on a cluster rig: a seeded generator (a failing run replays with its seed), and clients
// that send keyed requests to random nodes while nodes are SIGKILLed — a request that fails or gets no answer is retried
// on another node with the same key until one is acknowledged — and record what was acknowledged, to be counted after.
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ClusterRig } from './cluster-rig.ts';
import { logLines } from './e2e-daemon.ts';

/** A small seeded generator (mulberry32): the same seed gives the same sequence. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** Waits `ms` of real time (pacing the load, never to wait for an outcome). */
export const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The random choices of one run. */
export interface Chooser {
  random: () => number;
  pick<T>(items: readonly T[]): T;
}

/** A Chooser over `random`. */
export function chooser(random: () => number): Chooser {
  return { random, pick: <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T };
}

/**
 * Runs `attempt` against random running nodes until it returns a value (not undefined); a throw (refused, connection
 * reset by a kill) or undefined is retried after a short pause, maybe elsewhere. Resolves with the value.
 */
export async function untilAcknowledged<T>(
  rig: ClusterRig,
  choose: Chooser,
  attempt: (node: string) => Promise<T | undefined>,
): Promise<T> {
  for (;;) {
    const up = rig.up();
    if (up.length > 0) {
      try {
        const value = await attempt(choose.pick(up));
        if (value !== undefined) return value;
      } catch {
        // Refused by a dying node, in progress on another, or at capacity: try again, maybe elsewhere.
      }
    }
    await pause(100 + choose.random() * 200);
  }
}

/** POST /hooks/wake to `node` with `key`; the JSON answer on 200, undefined on another status (throws when unanswered). */
export async function wakeOn(
  rig: ClusterRig,
  node: string,
  key: string,
  text: string,
): Promise<Record<string, unknown> | undefined> {
  const daemon = rig.node(node);
  const token = readFileSync(join(daemon.home, 'hooks.token'), 'utf8').trim();
  const res = await fetch(`${daemon.url}/hooks/wake`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, 'idempotency-key': key },
    body: JSON.stringify({ text }),
  });
  const json = (await res.json()) as Record<string, unknown>;
  return res.status === 200 ? json : undefined;
}

/** A keyed launch of a multi-turn session named `key` in its own folder; resolves with the session id acknowledged. */
export async function launchKeyed(rig: ClusterRig, choose: Chooser, key: string): Promise<string> {
  const workdir = join(rig.workspace, key);
  mkdirSync(workdir, { recursive: true });
  const session = await untilAcknowledged(rig, choose, (node) =>
    rig.node(node).rpc<{ id: string }>('sessions.launch', {
      prompt: `chaos ${key} [[stream:5]]`,
      workdir,
      name: key,
      idempotencyKey: key,
    }),
  );
  return session.id;
}

/**
 * Sends `text` once to session `id` through a random running node; true when acknowledged. Not retried: a send has no
 * key, so a repeat after a lost answer could deliver it twice — an unanswered send may have arrived or not.
 */
export async function sendOnce(rig: ClusterRig, choose: Chooser, id: string, text: string): Promise<boolean> {
  const up = rig.up();
  if (up.length === 0) return false;
  try {
    await rig.node(choose.pick(up)).rpc('sessions.send', { session: id, message: text });
    return true;
  } catch {
    return false;
  }
}

/** A session as `sessions.list` shows it. */
export interface ListedSession {
  id: string;
  name: string;
  status: string;
  node?: string | null;
}

/** Every session of the cluster (asked of a running node). */
export async function listSessions(rig: ClusterRig): Promise<ListedSession[]> {
  const node = rig.up()[0];
  if (!node) throw new Error('no node is running');
  const page = await rig.node(node).rpc<{ sessions: ListedSession[] }>('sessions.list', { status: 'all', limit: 500 });
  return page.sessions;
}

/** The lines of a session's whole output (asked of a running node). */
export async function outputLines(rig: ClusterRig, id: string): Promise<string[]> {
  const node = rig.up()[0];
  if (!node) throw new Error('no node is running');
  const out = await rig.node(node).rpc<{ lines: string[] }>('sessions.output', { session: id, full: true });
  return out.lines;
}

/** The working directory of each agent start the fake agents logged to `agentLog` (none when it does not exist). */
export function agentStarts(agentLog: string): string[] {
  if (!existsSync(agentLog)) return [];
  return readFileSync(agentLog, 'utf8')
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((line) => (JSON.parse(line) as { cwd: string }).cwd);
}

/** The node holding lease `name` now ('' when none does). */
export async function holderOf(rig: ClusterRig, name: string): Promise<string> {
  const row = await rig.db.selectFrom('cluster_leases').select('holder').where('name', '=', name).executeTakeFirst();
  return row?.holder ?? '';
}

/** The node holding lease `name` now; throws when nobody does. */
export async function heldBy(rig: ClusterRig, name: string): Promise<string> {
  const holder = await holderOf(rig, name);
  if (!holder) throw new Error(`nobody holds ${name}`);
  return holder;
}

/** The nodes and leases as the database has them now, one line each (for a failure's message). */
export async function clusterState(rig: ClusterRig): Promise<string> {
  const now = Date.now();
  const nodes = await rig.db
    .selectFrom('cluster_nodes')
    .select(['name', 'incarnation', 'status', 'heartbeat_at'])
    .execute();
  const leases = await rig.db
    .selectFrom('cluster_leases')
    .select(['name', 'holder', 'incarnation', 'expires_at'])
    .execute();
  return [
    ...nodes.map((n) => `node ${n.name} ${n.status} ${n.incarnation} beat ${now - n.heartbeat_at} ms ago`),
    ...leases.map((l) => `lease ${l.name} → ${l.holder} ${l.incarnation} expires in ${l.expires_at - now} ms`),
    `running here: ${rig.up().join(' ')}`,
    `engine on the holder: ${await engineState(rig, leases.find((l) => l.name === 'primary')?.holder ?? '')}`,
  ].join('\n');
}

/** The holder's `engine.sessions` (or why it cannot be read). */
async function engineState(rig: ClusterRig, holder: string): Promise<string> {
  if (!rig.up().includes(holder)) return `(${holder || 'nobody'} is not running)`;
  try {
    return JSON.stringify(await rig.node(holder).rpc('engine.sessions', {}));
  } catch (error) {
    return String(error);
  }
}

/**
 * How many outbox messages a new holder sent again after its sender was lost mid-send on a channel with no idempotency
 * key (Telegram): each may have arrived twice — the one duplicate the design allows (see channels/outbox.ts).
 */
export function resentAfterLoss(rig: ClusterRig): number {
  return rig.runs
    .flatMap(({ daemon }) => logLines(daemon.output()))
    .filter((l) => String(l.msg ?? '').startsWith('outbound message interrupted mid-send by a crash')).length;
}
