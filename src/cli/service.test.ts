import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { tempDir } from '../../test/support/temp-dir.ts';
import { CliError } from './cli-error.ts';
import { runDoctor } from './doctor.ts';
import type { ServiceHost } from './service.ts';
import { installService, serviceStatus, serviceTarget, uninstallService } from './service.ts';
import { serviceCheck } from './service-check.ts';
import { addServiceCommands } from './service-commands.ts';
import type { CommandRunner, RunOutcome } from './service-runner.ts';
import { serviceSpec } from './service-spec.ts';
import { systemdUnit } from './service-systemd.ts';

/** A stand-in for systemctl/launchctl: records every call and answers from a table (default: success, no output). */
function recorder(
  answers: Record<string, Partial<Extract<RunOutcome, { kind: 'ran' }>>> = {},
  missing = false,
): { run: CommandRunner; calls: string[] } {
  const calls: string[] = [];
  const run: CommandRunner = (command, args) => {
    const line = [command, ...args].join(' ');
    calls.push(line);
    if (missing) return { kind: 'missing', command };
    return { kind: 'ran', status: 0, stdout: '', stderr: '', ...answers[line] };
  };
  return { run, calls };
}

const mode = (path: string): number => statSync(path).mode & 0o777;

describe('service', () => {
  const dir = tempDir('sb-service-');
  after(() => dir.remove());
  let n = 0;
  function machine(platform: NodeJS.Platform): ServiceHost {
    n += 1;
    return { platform, homeDir: join(dir.path, `user${n}`), uid: 501 };
  }
  function spec(host: ServiceHost) {
    return serviceSpec({
      env: {
        PATH: '/usr/local/bin:/usr/bin',
        SWITCHBOARD_PORT: '4000',
        SWITCHBOARD_TOKEN: 'secret-cli-token',
        SWITCHBOARD_URL: 'http://x',
        SWITCHBOARD_FAULT: 'restore@1',
        OPENAI_API_KEY: 'sk-1',
        OTHER: 'no',
      },
      home: join(host.homeDir, 'sb home 100%'),
      config: join(host.homeDir, 'conf', 'config.json5'),
      passEnv: ['OPENAI_API_KEY'],
      node: '/opt/node 24/bin/node',
      entry: '/srv/switch"board/src/cli/main.ts',
    });
  }

  it('systemd: install writes a 0600 user unit (folder 0700) that starts the daemon at login with this home and config, restarts it on failure, and enables it', () => {
    const host = machine('linux');
    const target = serviceTarget(host);
    const file = join(host.homeDir, '.config', 'systemd', 'user', 'switchboard.service');
    assert.equal(target.file, file);
    const { run, calls } = recorder();
    const lines = installService(target, spec(host), run);
    assert.equal(mode(file), 0o600);
    assert.equal(mode(dirname(file)), 0o700);
    const unit = readFileSync(file, 'utf8');
    assert.match(unit, /^ExecStart="\/opt\/node 24\/bin\/node" "\/srv\/switch\\"board\/src\/cli\/main\.ts" "start"$/m);
    assert.match(
      unit,
      /^WorkingDirectory=\/srv\/switch"board$/m,
      'a path as it is: systemd takes quotes there literally',
    );
    assert.ok(unit.includes(`Environment="SWITCHBOARD_HOME=${join(host.homeDir, 'sb home 100%%')}"`), unit);
    assert.ok(unit.includes(`Environment="SWITCHBOARD_CONFIG=${join(host.homeDir, 'conf', 'config.json5')}"`));
    assert.match(unit, /^Environment="PATH=\/usr\/local\/bin:\/usr\/bin"$/m);
    assert.match(unit, /^Environment="SWITCHBOARD_PORT=4000"$/m);
    assert.match(unit, /^Environment="OPENAI_API_KEY=sk-1"$/m);
    assert.doesNotMatch(
      unit,
      /secret-cli-token|SWITCHBOARD_URL|SWITCHBOARD_FAULT|OTHER=/,
      'the CLI-only variables and unasked ones stay out',
    );
    assert.match(unit, /^Restart=on-failure$/m);
    assert.match(unit, /^WantedBy=default\.target$/m);
    assert.deepEqual(calls, ['systemctl --user daemon-reload', 'systemctl --user enable --now switchboard.service']);
    assert.match(lines.join('\n'), /starts at login and restarts on failure/);

    const again = recorder();
    installService(target, spec(host), again.run);
    assert.deepEqual(
      again.calls.at(-1),
      'systemctl --user restart switchboard.service',
      'a reinstall restarts it with the new unit',
    );
  });

  it('systemd: status asks systemctl; uninstall disables it, removes the unit and reloads', () => {
    const host = machine('linux');
    const target = serviceTarget(host);
    assert.equal(serviceStatus(target, recorder().run).installed, false);
    installService(target, spec(host), recorder().run);
    const answers = {
      'systemctl --user is-active switchboard.service': { stdout: 'active\n' },
      'systemctl --user is-enabled switchboard.service': { stdout: 'enabled\n' },
    };
    const status = serviceStatus(target, recorder(answers).run);
    assert.deepEqual(
      { installed: status.installed, state: status.state, detail: status.detail },
      { installed: true, state: 'running', detail: 'installed (enabled), active' },
    );
    const stopped = serviceStatus(
      target,
      recorder({ 'systemctl --user is-active switchboard.service': { status: 3, stdout: 'failed\n' } }).run,
    );
    assert.equal(stopped.state, 'stopped');

    const { run, calls } = recorder();
    assert.match(uninstallService(target, run).join('\n'), /Removed/);
    assert.equal(existsSync(target.file), false);
    assert.deepEqual(calls, ['systemctl --user disable --now switchboard.service', 'systemctl --user daemon-reload']);
    assert.match(uninstallService(target, run).join('\n'), /Not installed/);
  });

  it('systemd: without systemctl the unit is still written (and removed), and the output says nothing was started', () => {
    const host = machine('linux');
    const target = serviceTarget({ ...host, xdgConfigHome: join(host.homeDir, 'xdg') });
    assert.equal(target.file, join(host.homeDir, 'xdg', 'systemd', 'user', 'switchboard.service'));
    const none = recorder({}, true);
    assert.match(installService(target, spec(host), none.run).join('\n'), /systemctl not found: nothing was started/);
    assert.ok(existsSync(target.file));
    assert.equal(serviceStatus(target, none.run).state, 'unknown');
    assert.match(
      uninstallService(target, none.run).join('\n'),
      /Could not stop it first \(systemctl not found\)[\s\S]*Removed/,
    );
    assert.equal(existsSync(target.file), false);
  });

  it('systemd: a failing systemctl is an error with its message, not silence', () => {
    const host = machine('linux');
    const { run } = recorder({ 'systemctl --user daemon-reload': { status: 1, stderr: 'Failed to connect to bus' } });
    assert.throws(
      () => installService(serviceTarget(host), spec(host), run),
      (e: unknown) =>
        e instanceof CliError && /Failed to connect to bus/.test(e.message) && /loginctl enable-linger/.test(e.message),
    );
  });

  it('launchd: install writes a 0600 plist that runs at load and keeps the daemon alive on failure, then bootstraps it; uninstall boots it out and removes it', () => {
    const host = machine('darwin');
    const target = serviceTarget(host);
    const file = join(host.homeDir, 'Library', 'LaunchAgents', 'local.switchboard.daemon.plist');
    assert.equal(target.file, file);
    const { run, calls } = recorder();
    installService(target, spec(host), run);
    assert.equal(mode(file), 0o600);
    const plist = readFileSync(file, 'utf8');
    assert.match(plist, /<key>Label<\/key>\s*<string>local\.switchboard\.daemon<\/string>/);
    assert.match(
      plist,
      /<array>\s*<string>\/opt\/node 24\/bin\/node<\/string>\s*<string>\/srv\/switch&quot;board\/src\/cli\/main\.ts<\/string>\s*<string>start<\/string>\s*<\/array>/,
    );
    assert.match(plist, /<key>SWITCHBOARD_HOME<\/key>\s*<string>[^<]*sb home 100%<\/string>/);
    assert.match(plist, /<key>SWITCHBOARD_CONFIG<\/key>/);
    assert.match(plist, /<key>RunAtLoad<\/key>\s*<true\/>/);
    assert.match(plist, /<key>KeepAlive<\/key>\s*<dict>\s*<key>SuccessfulExit<\/key>\s*<false\/>/);
    assert.match(plist, /<key>StandardErrorPath<\/key>\s*<string>[^<]*daemon\.log<\/string>/);
    assert.doesNotMatch(plist, /secret-cli-token/);
    assert.deepEqual(calls, [`launchctl bootstrap gui/501 ${file}`]);

    const printed = {
      'launchctl print gui/501/local.switchboard.daemon': {
        stdout: 'gui/501/local.switchboard.daemon = {\n\tstate = running\n\tpid = 4242\n',
      },
    };
    const status = serviceStatus(target, recorder(printed).run);
    assert.deepEqual([status.state, status.detail], ['running', 'installed, running (pid 4242)']);

    const removal = recorder();
    uninstallService(target, removal.run);
    assert.deepEqual(removal.calls, ['launchctl bootout gui/501/local.switchboard.daemon']);
    assert.equal(existsSync(file), false);
  });

  it('refuses platforms without systemd or launchd', () => {
    assert.throws(
      () => serviceTarget(machine('win32')),
      (e: unknown) => e instanceof CliError && /not win32/.test(e.message),
    );
  });

  it('--env refuses a variable that is not set, naming it (exit 2)', () => {
    assert.throws(
      () => serviceSpec({ env: {}, passEnv: ['NOPE_KEY'] }),
      (e: unknown) => e instanceof CliError && e.exitCode === 2 && /--env NOPE_KEY/.test(e.message),
    );
  });

  it('doctor: says whether the service is installed and running', () => {
    const host = machine('linux');
    assert.match(serviceCheck({}, host, recorder().run).detail, /not installed/);
    installService(serviceTarget(host), spec(host), recorder().run);
    const running = serviceCheck(
      {},
      host,
      recorder({ 'systemctl --user is-active switchboard.service': { stdout: 'active\n' } }).run,
    );
    assert.equal(running.status, 'ok');
    assert.match(running.detail, /active/);
    const failed = serviceCheck(
      {},
      host,
      recorder({ 'systemctl --user is-active switchboard.service': { status: 3, stdout: 'failed\n' } }).run,
    );
    assert.equal(failed.status, 'warn');
    assert.match(failed.detail, /failed/);
  });

  it('service install / status / uninstall as commands, with the machine and init system injected', async () => {
    const host = machine('linux');
    const out: string[] = [];
    let exitCode = 0;
    const { run, calls } = recorder();
    const program = new Command('switchboard').exitOverride().option('--home <dir>');
    addServiceCommands(program, {
      out: (t) => out.push(t),
      env: { PATH: '/bin', KEY: 'v' },
      setExitCode: (c) => (exitCode = c),
      host,
      run,
    });
    await program.parseAsync(['--home', join(host.homeDir, 'h'), 'service', 'install', '--env', 'KEY'], {
      from: 'user',
    });
    const unit = readFileSync(serviceTarget(host).file, 'utf8');
    assert.ok(unit.includes(`Environment="SWITCHBOARD_HOME=${join(host.homeDir, 'h')}"`));
    assert.match(unit, /^Environment="KEY=v"$/m);
    await program.parseAsync(['service', 'status'], { from: 'user' });
    assert.equal(exitCode, 3, 'installed but not active');
    await program.parseAsync(['service', 'uninstall'], { from: 'user' });
    assert.equal(existsSync(serviceTarget(host).file), false);
    assert.ok(calls.includes('systemctl --user disable --now switchboard.service'));
    assert.match(out.join('\n'), /Wrote[\s\S]*Removed/);
  });

  it(
    'doctor has a Service line',
    { skip: process.platform !== 'linux' && 'the unit path is injected through XDG_CONFIG_HOME on Linux only' },
    async () => {
      const home = join(dir.path, 'doctor-home');
      mkdirSync(home, { recursive: true });
      const fake = (name: string): string =>
        fileURLToPath(new URL(`../../test/support/fake-${name}.mjs`, import.meta.url));
      const harnesses = {
        claude: { executable: fake('claude') },
        codex: { executable: fake('codex') },
        gemini: { executable: fake('gemini') },
      };
      writeFileSync(
        join(home, 'config.json5'),
        JSON.stringify({ workspaces: [dir.path], harnesses, gateway: { port: 9 } }),
      );
      const checks = await runDoctor({ home, env: { XDG_CONFIG_HOME: join(dir.path, 'doctor-xdg') } });
      assert.match(checks.find((c) => c.label === 'Service')?.detail ?? '', /not installed/);
    },
  );

  const analyze = spawnSync('systemd-analyze', ['--version'], { encoding: 'utf8' });
  it(
    'systemd-analyze verify accepts the unit, spaces and % in its paths included',
    { skip: analyze.error ? 'systemd-analyze is not installed' : false },
    () => {
      const folder = join(dir.path, 'switch board 100%');
      mkdirSync(join(folder, 'src', 'cli'), { recursive: true });
      writeFileSync(join(folder, 'src', 'cli', 'main.ts'), '');
      const unitFile = join(dir.path, 'verify', 'switchboard.service');
      mkdirSync(dirname(unitFile), { recursive: true });
      const built = serviceSpec({
        env: { PATH: '/usr/bin', KEY: 'a"b%c$d \\ e' },
        home: join(folder, 'home'),
        passEnv: ['KEY'],
        entry: join(folder, 'src', 'cli', 'main.ts'),
      });
      writeFileSync(unitFile, systemdUnit(built));
      const verified = spawnSync('systemd-analyze', ['verify', unitFile], { encoding: 'utf8' });
      assert.equal(verified.status, 0, verified.stderr);
      assert.equal(verified.stderr.trim(), '', verified.stderr);
    },
  );
});
