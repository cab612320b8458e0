import { randomBytes } from 'node:crypto';
import { readFile, rename, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { ensurePrivateDir, makePrivateDirs, openPrivateAsync, PRIVATE_FILE_MODE } from '../core/private-files.ts';
import type { LogEntry, LogRecord } from './jsonl-log.ts';
import { fsyncDirectory, JsonlLog } from './jsonl-log.ts';

const SAFE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

function checkName(name: string): void {
  if (!SAFE_NAME.test(name)) throw new Error(`invalid artifact file name: ${name}`);
}

/**
 * Writes `data` to `path` atomically: a temp file in the same directory is written and fsync'd, renamed over the
 * target, and the directory is fsync'd. A crash leaves the old content or the new one, never a truncated file.
 * The file ends up with `mode` (default 0600); missing folders are created 0700, existing ones left as they are.
 */
export async function writeFileAtomic(path: string, data: string, mode: number = PRIVATE_FILE_MODE): Promise<void> {
  const dir = dirname(path);
  makePrivateDirs(dir);
  const tmp = join(dir, `.${randomBytes(6).toString('hex')}.tmp`);
  const handle = await openPrivateAsync(tmp, 'wx', mode);
  try {
    await handle.writeFile(data, 'utf8');
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await rename(tmp, path);
  } catch (error) {
    await rm(tmp, { force: true });
    throw error;
  }
  fsyncDirectory(dir);
}

/** Reads a UTF-8 file; resolves to null when it does not exist (other errors are thrown). */
export async function readTextIfExists(path: string): Promise<string | null> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

/**
 * Makes sure every line of `lines` is present in the text file at `path` (created 0600 with its directory if missing),
 * appending the missing ones atomically. An existing file keeps its mode: it may be someone else's (a repository's
 * info/exclude). Resolves to the lines it added.
 */
export async function ensureLines(path: string, lines: readonly string[]): Promise<string[]> {
  const current = await readTextIfExists(path);
  const text = current ?? '';
  const present = new Set(text.split('\n').map((l) => l.trim()));
  const missing = lines.filter((line) => !present.has(line.trim()));
  if (missing.length === 0) return [];
  const prefix = text.length > 0 && !text.endsWith('\n') ? `${text}\n` : text;
  const mode = current === null ? PRIVATE_FILE_MODE : (await stat(path)).mode & 0o777;
  await writeFileAtomic(path, `${prefix}${missing.join('\n')}\n`, mode);
  return missing;
}

/**
 * One directory of artifacts (0700, its files 0600): whole files replaced atomically (`writeText`, `writeJson`) and
 * append-only JSONL logs (`append`: one write per record, group-committed fdatasync, torn tail repaired on open).
 */
export class ArtifactDir {
  readonly dir: string;
  #logs = new Map<string, JsonlLog>();
  #now: () => number;
  #dirReady = false;

  constructor(dir: string, options: { now: () => number }) {
    this.dir = dir;
    this.#now = options.now;
  }

  /** Creates the folder 0700, or makes an existing one 0700 (it may have come with the worktree's checkout). */
  #ensureDir(): void {
    if (this.#dirReady) return;
    ensurePrivateDir(this.dir);
    this.#dirReady = true;
  }

  /** Replaces file `name` with `text` atomically. */
  async writeText(name: string, text: string): Promise<void> {
    checkName(name);
    this.#ensureDir();
    await writeFileAtomic(join(this.dir, name), text);
  }

  /** Replaces file `name` with `value` as pretty JSON atomically. */
  async writeJson(name: string, value: unknown): Promise<void> {
    await this.writeText(name, `${JSON.stringify(value, null, 2)}\n`);
  }

  /** Reads file `name`, or null when it does not exist. */
  async readText(name: string): Promise<string | null> {
    checkName(name);
    return readTextIfExists(join(this.dir, name));
  }

  /** Appends one record to the JSONL log `name` and resolves once it is on disk. */
  async append(name: string, entry: LogEntry): Promise<LogRecord> {
    checkName(name);
    let log = this.#logs.get(name);
    if (!log) {
      this.#ensureDir();
      log = JsonlLog.open(join(this.dir, name), { now: this.#now });
      this.#logs.set(name, log);
    }
    const record = log.write(entry);
    await log.sync();
    return record;
  }

  /** Syncs and closes the open logs (they reopen on the next append). */
  async close(): Promise<void> {
    const logs = [...this.#logs.values()];
    this.#logs.clear();
    await Promise.all(logs.map((log) => log.close()));
  }
}
