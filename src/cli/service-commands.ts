import { homedir } from 'node:os';
import type { Command } from 'commander';
import type { ServiceHost } from './service.ts';
import { installService, serviceStatus, serviceTarget, uninstallService } from './service.ts';
import type { CommandRunner } from './service-runner.ts';
import { spawnRunner } from './service-runner.ts';
import { serviceSpec } from './service-spec.ts';

/** What the service commands need: output, the environment, and (for tests) the machine and the init-system runner. */
export interface ServiceCommandsIo {
  out: (text: string) => void;
  env: NodeJS.ProcessEnv;
  setExitCode: (code: number) => void;
  host?: ServiceHost;
  run?: CommandRunner;
}

/** This machine, as the service commands see it. */
export function currentHost(env: NodeJS.ProcessEnv): ServiceHost {
  return {
    platform: process.platform,
    homeDir: homedir(),
    uid: typeof process.getuid === 'function' ? process.getuid() : 0,
    ...(env.XDG_CONFIG_HOME ? { xdgConfigHome: env.XDG_CONFIG_HOME } : {}),
  };
}

/** Adds `service install | uninstall | status` (global `--home` is read from the program). */
export function addServiceCommands(program: Command, io: ServiceCommandsIo): void {
  const host = (): ServiceHost => io.host ?? currentHost(io.env);
  const run = io.run ?? spawnRunner;
  const service = program
    .command('service')
    .description('Keep the daemon always on: a systemd user unit (Linux) or a launchd agent (macOS)');

  service
    .command('install')
    .description(
      'Install and start the service: the daemon starts at login and restarts on failure, with this home and config',
    )
    .option('--config <file>', 'config file the service uses (default $SWITCHBOARD_CONFIG, else <home>/config.json5)')
    .option(
      '--env <NAME>',
      'carry this environment variable into the service, e.g. an API key (repeatable)',
      (v: string, prev: string[] = []) => [...prev, v],
    )
    .action((opts: { config?: string; env?: string[] }) => {
      const home = program.opts<{ home?: string }>().home;
      const spec = serviceSpec({
        env: io.env,
        ...(home ? { home } : {}),
        ...(opts.config ? { config: opts.config } : {}),
        ...(opts.env ? { passEnv: opts.env } : {}),
      });
      for (const line of installService(serviceTarget(host()), spec, run)) io.out(line);
    });

  service
    .command('uninstall')
    .description('Stop the service and remove its unit or plist')
    .action(() => {
      for (const line of uninstallService(serviceTarget(host()), run)) io.out(line);
    });

  service
    .command('status')
    .description('Whether the service is installed and running (exit 0 when it runs, 3 when not)')
    .option('--json', 'print the status as JSON')
    .action((opts: { json?: boolean }) => {
      const status = serviceStatus(serviceTarget(host()), run);
      io.out(
        opts.json ? JSON.stringify(status, null, 2) : `${status.target.kind} ${status.target.file}: ${status.detail}`,
      );
      if (status.state !== 'running') io.setExitCode(3);
    });
}
