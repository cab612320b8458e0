import { CliError } from './cli-error.ts';
import type { Check } from './doctor.ts';
import type { ServiceHost } from './service.ts';
import { serviceStatus, serviceTarget } from './service.ts';
import { currentHost } from './service-commands.ts';
import type { CommandRunner } from './service-runner.ts';
import { spawnRunner } from './service-runner.ts';

/** The doctor's line about the always-on service: installed or not, and whether the init system runs it. */
export function serviceCheck(
  env: NodeJS.ProcessEnv,
  host: ServiceHost = currentHost(env),
  run: CommandRunner = spawnRunner,
): Check {
  let target: ReturnType<typeof serviceTarget>;
  try {
    target = serviceTarget(host);
  } catch (error) {
    if (error instanceof CliError)
      return { status: 'ok', label: 'Service', detail: `none on ${host.platform} (start the daemon yourself)` };
    throw error;
  }
  const status = serviceStatus(target, run);
  if (!status.installed)
    return {
      status: 'ok',
      label: 'Service',
      detail: 'not installed (`switchboard service install` keeps the daemon always on)',
    };
  switch (status.state) {
    case 'running':
      return { status: 'ok', label: 'Service', detail: `${target.kind}: ${status.detail}` };
    case 'stopped':
    case 'unknown':
      return { status: 'warn', label: 'Service', detail: `${target.kind}: ${status.detail} — ${target.file}` };
    default: {
      const never: never = status.state;
      throw new Error(`unknown service state ${String(never)}`);
    }
  }
}
