import { spawnSync } from 'node:child_process';

/** How one init-system command went: it ran (with its exit status and output), or the command does not exist here. */
export type RunOutcome =
  { kind: 'ran'; status: number; stdout: string; stderr: string } | { kind: 'missing'; command: string };

/** Runs an init-system command (`systemctl`, `launchctl`) with an argument array; injected so tests never touch the real one. */
export type CommandRunner = (command: string, args: readonly string[]) => RunOutcome;

/** The real runner: spawnSync without a shell, 30 s at most; a missing executable is `missing`, other spawn errors throw. */
export const spawnRunner: CommandRunner = (command, args) => {
  const result = spawnSync(command, args, { encoding: 'utf8', timeout: 30_000 });
  if (result.error) {
    if ((result.error as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'missing', command };
    throw result.error;
  }
  return { kind: 'ran', status: result.status ?? 1, stdout: result.stdout, stderr: result.stderr };
};

/** One line saying how a command failed, for messages. */
export function describeFailure(command: string, args: readonly string[], outcome: RunOutcome): string {
  switch (outcome.kind) {
    case 'missing':
      return `${command} not found`;
    case 'ran':
      return `\`${[command, ...args].join(' ')}\` exited ${outcome.status}${outcome.stderr.trim() ? `: ${outcome.stderr.trim()}` : ''}`;
    default: {
      const never: never = outcome;
      throw new Error(`unknown outcome ${JSON.stringify(never)}`);
    }
  }
}
