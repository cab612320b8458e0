// The coding sessions in this node's memory, by id, and the lookups that prefer them to the store's rows (a live
// session's record is the newest; its row may lag behind).
import { conflict, notFound } from '../core/errors.ts';
import type { StoredSession } from '../store/coding-session-types.ts';
import type { CodingSessionStore } from '../store/coding-sessions.ts';
import type { Session } from './session.ts';

/** The sessions in memory on this node (starting, running, or ended and not yet cleaned up), by session id. */
export class SessionPool {
  readonly #live = new Map<string, Session>();
  readonly #store: Pick<CodingSessionStore, 'resolve'>;

  /** `store` resolves the refs (id, name or backend id) of sessions not in memory. */
  constructor(store: Pick<CodingSessionStore, 'resolve'>) {
    this.#store = store;
  }

  /** The live Session with this internal id, if it is in memory (no store lookup). */
  byId(id: string): Session | undefined {
    return this.#live.get(id);
  }

  /** Whether the session of this id is in memory. */
  has(id: string): boolean {
    return this.#live.has(id);
  }

  /** Puts a started session in memory under its id. */
  add(id: string, session: Session): void {
    this.#live.set(id, session);
  }

  /** Drops a session from memory (no-op when it is not there). */
  remove(id: string): void {
    this.#live.delete(id);
  }

  /** The sessions in memory with their ids, as the map holds them (removals during the iteration are seen). */
  entries(): MapIterator<[string, Session]> {
    return this.#live.entries();
  }

  /** The sessions in memory, as the map holds them (removals during the iteration are seen). */
  values(): MapIterator<Session> {
    return this.#live.values();
  }

  /** The sessions starting or running here (they count against `maxSessions`). */
  active(): Session[] {
    return [...this.#live.values()].filter((s) => s.isActive);
  }

  /** The live Session for a ref (id, name or backend id), if it is in memory. */
  async live(ref: string): Promise<Session | undefined> {
    const inMemory = this.#inMemory(ref);
    if (inMemory) return inMemory;
    const record = await this.#store.resolve(ref);
    return record ? this.#live.get(record.id) : undefined;
  }

  /** The record for a ref (id, name or backend id): a copy of the live one, else the stored one; throws not_found. */
  async requireStored(ref: string): Promise<StoredSession> {
    const inMemory = this.#inMemory(ref);
    if (inMemory) return { ...inMemory.record };
    const record = await this.#store.resolve(ref);
    if (!record) throw notFound(`no session "${ref}" (give a session id, name, or the agent's own session id)`);
    const live = this.#live.get(record.id);
    return live ? { ...live.record } : record;
  }

  /**
   * The session in memory that `ref` names: by id, else by name or backend id as its live record has them. A new
   * backend id is on the live record as soon as the agent reports it, while the row's write (and its lookup key) may
   * still be on its way, so a lookup right after "started" must not depend on that write.
   */
  #inMemory(ref: string): Session | undefined {
    const byId = this.#live.get(ref);
    if (byId) return byId;
    for (const session of this.#live.values()) {
      const { name, backendSessionId } = session.record;
      if (name === ref || backendSessionId === ref) return session;
    }
    return undefined;
  }

  /** The live, active Session for a ref; throws not_found, or conflict when it is queued or not running. */
  async requireLive(ref: string): Promise<Session> {
    const record = await this.requireStored(ref);
    const session = this.#live.get(record.id);
    if (record.status === 'queued')
      throw conflict(
        `session ${record.name} is queued: it waits for a node with a free slot (kill ${record.name} to drop it)`,
      );
    if (!session || !session.isActive) {
      throw conflict(`session ${record.name} is ${record.status}; resume it first (resume ${record.name})`);
    }
    return session;
  }
}
