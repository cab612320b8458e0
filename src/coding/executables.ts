import { accessSync, constants, existsSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** How to run an agent executable: a native binary directly, a JS entry point through the current Node. */
export interface Invocation {
  command: string;
  argsPrefix: string[];
}

const JS_ENTRY = /\.(c|m)?(j|t)sx?$/;

/** True when `path` is a JS/TS entry point (.js, .mjs, .cjs, .ts, .jsx, …) that runs under Node rather than directly. */
export function isJsEntry(path: string): boolean {
  return JS_ENTRY.test(path);
}

/** Returns how to spawn `path`: scripts ending in .js/.mjs/.ts run under this Node, anything else directly. */
export function invocationFor(path: string): Invocation {
  return isJsEntry(path) ? { command: process.execPath, argsPrefix: [path] } : { command: path, argsPrefix: [] };
}

/** Finds `node_modules/<pkg>/<subpath>` walking up from this source file; returns the absolute path or undefined. */
export function findPackageFile(pkg: string, subpath: string): string | undefined {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, 'node_modules', pkg, subpath);
    if (existsSync(candidate)) return candidate;
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

/** Finds an executable named `name` on PATH; returns its absolute path or undefined. */
export function findOnPath(name: string, pathVar = process.env.PATH ?? ''): string | undefined {
  for (const dir of pathVar.split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here; keep looking
    }
  }
  return undefined;
}

/** The Node platform suffix agent packages use for their native binaries (e.g. `linux-x64`). */
export function platformSuffix(): string {
  return `${process.platform}-${process.arch}`;
}
