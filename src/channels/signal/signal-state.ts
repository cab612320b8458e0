// What one Signal account's connector keeps across restarts, in one small JSON file (`<stateDir>/<account>.json`):
// the id of the last event of signal-cli's stream it handled (sent back as `Last-Event-ID` on reconnect, so signal-cli
// replays what came after it) and the numbered lists shown per conversation. Without a state directory it lives in
// memory only. Losing it is never worse than a replay (deduplicated) or a number passed on as plain text.
import { join } from 'node:path';
import { z } from 'zod';
import { readTextIfExists, writeFileAtomic } from '../../store/artifact-files.ts';
import type { MenuMap } from './signal-menus.ts';

const stateSchema = z.object({
  lastEventId: z.string().optional(),
  menus: z.record(z.string(), z.array(z.string())).default({}),
});

/** The kept state of one account. */
export class SignalState {
  #path: string | null;
  #lastEventId: string | undefined;
  #menus: MenuMap = {};
  #writing: Promise<void> = Promise.resolve();
  #dirty = false;
  #unsaved = false;

  /** `stateDir` null: memory only. `name` names the file (the account, or `default`). */
  constructor(stateDir: string | null, name: string) {
    this.#path = stateDir ? join(stateDir, `${name.replace(/[^A-Za-z0-9_-]/g, '_')}.json`) : null;
  }

  /** Reads the file, if any; a missing or unreadable file leaves the state empty (returns what went wrong). */
  async load(): Promise<string | null> {
    if (!this.#path) return null;
    try {
      const text = await readTextIfExists(this.#path);
      if (text === null) return null;
      const parsed = stateSchema.parse(JSON.parse(text));
      this.#lastEventId = parsed.lastEventId;
      this.#menus = parsed.menus;
      return null;
    } catch (error) {
      return error instanceof Error ? error.message : String(error);
    }
  }

  get lastEventId(): string | undefined {
    return this.#lastEventId;
  }

  get menus(): MenuMap {
    return this.#menus;
  }

  /**
   * Records the last handled event; with `persist`, writes the file and resolves once written (events that carry no
   * message, receipts and typing, are only noted: replaying them after a crash does nothing).
   */
  async handled(eventId: string | undefined, persist: boolean): Promise<void> {
    if (eventId === undefined || eventId === this.#lastEventId) return;
    this.#lastEventId = eventId;
    this.#unsaved = true;
    if (persist) await this.#save();
  }

  /** Writes what was only noted since the last write (on stop). */
  async flush(): Promise<void> {
    if (this.#unsaved) await this.#save();
  }

  /** Remembers the numbered list of the last message sent to `chat` and writes the file; resolves once written. */
  async remember(chat: string, commands: string[]): Promise<void> {
    this.#menus = { ...this.#menus, [chat]: commands };
    await this.#save();
  }

  /** Writes the current state; writes run one at a time and a write asked for during one covers the latest state. */
  async #save(): Promise<void> {
    const path = this.#path;
    if (!path) return;
    this.#dirty = true;
    const next = this.#writing.then(async () => {
      if (!this.#dirty) return;
      this.#dirty = false;
      this.#unsaved = false;
      const state = { lastEventId: this.#lastEventId, menus: this.#menus };
      await writeFileAtomic(path, `${JSON.stringify(state)}\n`);
    });
    this.#writing = next.catch(() => {});
    await next;
  }
}
