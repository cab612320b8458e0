// `switchboard service install | uninstall | status`: keeps the daemon running from login on, through the user's init
// system — a systemd user unit on Linux, a launchd agent on macOS. Paths and the command runner are injected.
import { chmodSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { processAlive, readDaemonInfo } from '../store/daemon-lock.ts';
import { CliError } from './cli-error.ts';
import { LAUNCHD_LABEL, launchdPlist } from './service-launchd.ts';
import type { CommandRunner } from './service-runner.ts';
import { describeFailure } from './service-runner.ts';
import type { ServiceSpec } from './service-spec.ts';
import { SYSTEMD_UNIT, systemdUnit } from './service-systemd.ts';

/** Which init system keeps the daemon running, and where its definition lives. */
export type ServiceTarget =
  { kind: 'systemd'; file: string; unit: string } | { kind: 'launchd'; file: string; label: string; domain: string };

/** Where the service is defined on this machine: the platform, the user's home folder and uid, $XDG_CONFIG_HOME. */
export interface ServiceHost {
  platform: NodeJS.Platform;
  homeDir: string;
  uid: number;
  xdgConfigHome?: string;
}

/** The init system and file for this platform; other platforms have none (exit 1, saying what to do instead). */
export function serviceTarget(host: ServiceHost): ServiceTarget {
  // eslint-disable-next-line @typescript-eslint/switch-exhaustiveness-check -- every other platform has no service manager
  switch (host.platform) {
    case 'linux':
      return {
        kind: 'systemd',
        file: join(host.xdgConfigHome || join(host.homeDir, '.config'), 'systemd', 'user', SYSTEMD_UNIT),
        unit: SYSTEMD_UNIT,
      };
    case 'darwin':
      return {
        kind: 'launchd',
        file: join(host.homeDir, 'Library', 'LaunchAgents', `${LAUNCHD_LABEL}.plist`),
        label: LAUNCHD_LABEL,
        domain: `gui/${host.uid}`,
      };
    default:
      throw new CliError(
        `switchboard service supports Linux (systemd) and macOS (launchd), not ${host.platform}: start the daemon with \`switchboard start\` from your own service manager`,
        1,
      );
  }
}

/** Whether the service is installed and whether the init system runs it. */
export interface ServiceStatus {
  target: ServiceTarget;
  installed: boolean;
  state: 'running' | 'stopped' | 'unknown';
  /** What the init system said, in a few words (or why it could not be asked). */
  detail: string;
}

function writePrivate(file: string, text: string): void {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  writeFileSync(file, text, { mode: 0o600 });
  chmodSync(file, 0o600);
}

/** Runs one init-system command that must succeed; a missing init system returns false, a failure throws. */
function must(run: CommandRunner, command: string, args: string[]): boolean {
  const outcome = run(command, args);
  if (outcome.kind === 'missing') return false;
  if (outcome.status !== 0) {
    // No user manager to talk to (a root shell in a container, su, an SSH session without lingering).
    const noBus = command === 'systemctl' && /bus/i.test(outcome.stderr);
    const hint = noBus
      ? ' — systemctl --user needs your user manager: log in as that user, or run `loginctl enable-linger` first'
      : '';
    throw new CliError(`${describeFailure(command, args, outcome)}${hint}`, 1);
  }
  return true;
}

/** A daemon already running for this home outside the service would hold the state directory: say so. */
function runningOutside(spec: ServiceSpec): string[] {
  const info = readDaemonInfo(spec.home);
  return info && processAlive(info.pid)
    ? [
        `Note: a daemon (pid ${info.pid}) already runs for ${spec.home}; the service's daemon starts once you stop it (kill ${info.pid}).`,
      ]
    : [];
}

/** Writes the unit or plist (0600, its folder 0700) and has the init system start it now and at every login. Returns what it did, line by line. */
export function installService(target: ServiceTarget, spec: ServiceSpec, run: CommandRunner): string[] {
  const existed = existsSync(target.file);
  switch (target.kind) {
    case 'systemd': {
      writePrivate(target.file, systemdUnit(spec));
      const lines = [`Wrote ${target.file}`];
      if (!must(run, 'systemctl', ['--user', 'daemon-reload'])) {
        return [
          ...lines,
          'systemctl not found: nothing was started. Load the unit with your init system, or run `switchboard start`.',
        ];
      }
      must(run, 'systemctl', ['--user', 'enable', '--now', target.unit]);
      if (existed) must(run, 'systemctl', ['--user', 'restart', target.unit]);
      lines.push(
        `Enabled and started ${target.unit}: it starts at login and restarts on failure (logs: journalctl --user -u ${target.unit}).`,
      );
      return [...lines, ...runningOutside(spec)];
    }
    case 'launchd': {
      if (existed) run('launchctl', ['bootout', `${target.domain}/${target.label}`]);
      writePrivate(target.file, launchdPlist(spec));
      mkdirSync(spec.home, { recursive: true, mode: 0o700 });
      const lines = [`Wrote ${target.file}`];
      if (!must(run, 'launchctl', ['bootstrap', target.domain, target.file])) {
        return [...lines, 'launchctl not found: nothing was started. Run `switchboard start` instead.'];
      }
      lines.push(`Loaded ${target.label}: it starts at login and restarts on failure (logs: ${spec.logFile}).`);
      return [...lines, ...runningOutside(spec)];
    }
    default: {
      const never: never = target;
      throw new Error(`unknown service target ${JSON.stringify(never)}`);
    }
  }
}

/** Stops the service, removes the unit or plist and tells the init system. Returns what it did. */
export function uninstallService(target: ServiceTarget, run: CommandRunner): string[] {
  if (!existsSync(target.file)) return [`Not installed (${target.file} does not exist).`];
  const lines: string[] = [];
  const stop =
    target.kind === 'systemd'
      ? { command: 'systemctl', args: ['--user', 'disable', '--now', target.unit] }
      : { command: 'launchctl', args: ['bootout', `${target.domain}/${target.label}`] };
  const outcome = run(stop.command, stop.args);
  // Removing the file is what was asked: a service that was not loaded is reported, not an error.
  if (outcome.kind === 'missing' || outcome.status !== 0)
    lines.push(`Could not stop it first (${describeFailure(stop.command, stop.args, outcome)}).`);
  rmSync(target.file);
  lines.push(`Removed ${target.file}`);
  if (target.kind === 'systemd' && outcome.kind === 'ran') must(run, 'systemctl', ['--user', 'daemon-reload']);
  return lines;
}

/** Asks the init system whether the installed service runs. */
export function serviceStatus(target: ServiceTarget, run: CommandRunner): ServiceStatus {
  const installed = existsSync(target.file);
  if (!installed)
    return { target, installed, state: 'stopped', detail: `not installed (run \`switchboard service install\`)` };
  switch (target.kind) {
    case 'systemd': {
      const active = run('systemctl', ['--user', 'is-active', target.unit]);
      if (active.kind === 'missing')
        return {
          target,
          installed,
          state: 'unknown',
          detail: 'installed; systemctl not found, so not known whether it runs',
        };
      const enabled = run('systemctl', ['--user', 'is-enabled', target.unit]);
      const word = active.stdout.trim() || 'unknown';
      const enabledWord = enabled.kind === 'ran' ? enabled.stdout.trim() || 'unknown' : 'unknown';
      return {
        target,
        installed,
        state: word === 'active' ? 'running' : 'stopped',
        detail: `installed (${enabledWord}), ${word}`,
      };
    }
    case 'launchd': {
      const printed = run('launchctl', ['print', `${target.domain}/${target.label}`]);
      if (printed.kind === 'missing')
        return {
          target,
          installed,
          state: 'unknown',
          detail: 'installed; launchctl not found, so not known whether it runs',
        };
      if (printed.status !== 0)
        return {
          target,
          installed,
          state: 'stopped',
          detail: 'installed, not loaded (log out and in, or run `switchboard service install` again)',
        };
      const state = /^\s*state = (\S+)/m.exec(printed.stdout)?.[1] ?? 'unknown';
      const pid = /^\s*pid = (\d+)/m.exec(printed.stdout)?.[1];
      return {
        target,
        installed,
        state: state === 'running' ? 'running' : 'stopped',
        detail: `installed, ${state}${pid ? ` (pid ${pid})` : ''}`,
      };
    }
    default: {
      const never: never = target;
      throw new Error(`unknown service target ${JSON.stringify(never)}`);
    }
  }
}
