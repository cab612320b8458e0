// Directory fsyncs shared by the files created together: a burst of new logs in one folder costs one or two syncs of
// that folder, not one each. A caller's entry is durable once a sync that STARTED after the entry was made finished,
// so a request that arrives while a sync of its folder runs waits for the next one (which every such request shares).

/** Opens, fsyncs and closes one directory; resolves once its entries are on disk. */
export type SyncDirectory = (dir: string) => Promise<void>;

interface Folder {
  /** The sync under way (it may have started before a waiting caller's entry was made). */
  running: Promise<void> | null;
  /** The sync every caller that arrived during `running` shares, started once `running` ends. */
  next: Promise<void> | null;
}

/**
 * Coalesces directory fsyncs per folder. `sync(dir)` resolves (or rejects with the sync's error) once a sync of `dir`
 * that began after the call has finished. `syncOnce` does the actual open + fsync + close (off the event loop).
 */
export class DirectorySync {
  readonly #folders = new Map<string, Folder>();
  readonly #syncOnce: SyncDirectory;

  constructor(syncOnce: SyncDirectory) {
    this.#syncOnce = syncOnce;
  }

  /** Makes the entries created in `dir` so far durable, sharing a sync with every other caller it can. */
  sync(dir: string): Promise<void> {
    let folder = this.#folders.get(dir);
    if (!folder) {
      folder = { running: null, next: null };
      this.#folders.set(dir, folder);
    }
    const { running } = folder;
    if (!running) return this.#start(dir, folder);
    if (folder.next) return folder.next;
    const current = folder;
    const again = (): Promise<void> => this.#start(dir, current);
    // After the running sync, whatever its outcome, one more for everyone who came during it.
    const next = running.then(again, again);
    current.next = next;
    return next;
  }

  #start(dir: string, folder: Folder): Promise<void> {
    folder.next = null;
    const running = this.#syncOnce(dir).finally(() => {
      if (folder.running !== running) return;
      folder.running = null;
      if (!folder.next) this.#folders.delete(dir);
    });
    folder.running = running;
    return running;
  }
}
