/** What node_modules looks like next to package-lock.json. */
export type InstallState = { kind: 'fresh' } | { kind: 'missing'; reason: string } | { kind: 'stale'; reason: string };
/** The project folder. */
export declare const PROJECT_ROOT: string;
/** Compares package-lock.json with node_modules/.package-lock.json. */
export declare function installState(root: string): InstallState;
/** The npm to run: the one running the script (npm_execpath), else `npm` on PATH. */
export declare function npmCommand(env: NodeJS.ProcessEnv, nodePath: string): { command: string; prefix: string[] };
/** Installs what is missing with `npm ci`; returns the exit code. */
export declare function ensureInstall(root?: string, env?: NodeJS.ProcessEnv): number;
