import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { tempDir } from '../../test/support/temp-dir.ts';
import { envOverrides, loadConfig } from './config-load.ts';

describe('loadConfig', () => {
  let dir: ReturnType<typeof tempDir>;
  beforeEach(() => {
    dir = tempDir();
  });
  afterEach(() => dir.remove());

  it('gives every seed default with no file', () => {
    const { config, home, configFileFound } = loadConfig({ env: { SWITCHBOARD_HOME: dir.path } });
    assert.equal(home, dir.path);
    assert.equal(configFileFound, false);
    assert.equal(config.maxSessions, 5);
    assert.equal(config.maxPersistedSessions, 50);
    assert.equal(config.idleTimeoutMinutes, 30);
    assert.equal(config.defaultBudgetUsd, 5);
    assert.equal(config.maxAutoResponds, 10);
    assert.equal(config.permissionMode, 'bypassPermissions');
    assert.deepEqual(config.timings, {
      fgDebounceMs: 500,
      safetyNetMs: 15_000,
      waitingEventDebounceMs: 5_000,
      longRunReminderMs: 600_000,
      reminderCheckIntervalMs: 60_000,
      cleanupIntervalMs: 300_000,
      cleanupMaxAgeMs: 3_600_000,
      killGraceMs: 5_000,
      fsyncBatchMs: 0,
    });
    assert.equal(config.gateway.host, '127.0.0.1');
    assert.equal(config.gateway.port, 18_789);
    assert.deepEqual(config.workspaces, [homedir()]);
  });

  it('reads JSON5, then env, then flags, and expands ~', () => {
    writeFileSync(
      join(dir.path, 'config.json5'),
      `{ // comment\n maxSessions: 3, workspaces: ['~/src'], agentChannels: {'~/src/app': 'telegram|1'}, }`,
    );
    const { config } = loadConfig({
      env: {
        SWITCHBOARD_HOME: dir.path,
        SWITCHBOARD_MAX_SESSIONS: '4',
        SWITCHBOARD_TIMINGS__SAFETY_NET_MS: '45000',
        SWITCHBOARD_PORT: '0',
      },
      overrides: { maxSessions: 7 },
    });
    assert.equal(config.maxSessions, 7);
    assert.equal(config.timings.safetyNetMs, 45_000);
    assert.equal(config.gateway.port, 0);
    assert.deepEqual(config.workspaces, [join(homedir(), 'src')]);
    assert.deepEqual(config.agentChannels, { [join(homedir(), 'src/app')]: 'telegram|1' });
  });

  it("makes every directory the config names absolute: ~ expanded, a relative one against the daemon's directory", () => {
    const { config } = loadConfig({
      env: { SWITCHBOARD_HOME: dir.path },
      overrides: {
        defaultWorkdir: 'work',
        'linear.codeRun.workdir': '~/runs',
        'linear.pipeline.repo': 'repos/main',
        'linear.pipeline.teamRepos': { ENG: '~/eng', OPS: 'ops' },
        'linear.pipeline.worktreeDir': '../trees',
      },
    });
    assert.equal(config.defaultWorkdir, resolve('work'));
    assert.equal(config.linear.codeRun.workdir, join(homedir(), 'runs'));
    assert.equal(config.linear.pipeline.repo, resolve('repos/main'));
    assert.deepEqual(config.linear.pipeline.teamRepos, { ENG: join(homedir(), 'eng'), OPS: resolve('ops') });
    assert.equal(config.linear.pipeline.worktreeDir, resolve('../trees'));
  });

  it('names the key, the reason and the source of a bad value', () => {
    assert.throws(
      () => loadConfig({ env: { SWITCHBOARD_HOME: dir.path, SWITCHBOARD_MAX_SESSIONS: 'lots' } }),
      /maxSessions: .*number.*\[from SWITCHBOARD_MAX_SESSIONS\]/,
    );
    writeFileSync(join(dir.path, 'config.json5'), '{ maxSesions: 3 }');
    assert.throws(() => loadConfig({ env: { SWITCHBOARD_HOME: dir.path } }), /Unrecognized key.*maxSesions/);
    writeFileSync(join(dir.path, 'config.json5'), '{ maxSessions: ');
    assert.throws(() => loadConfig({ env: { SWITCHBOARD_HOME: dir.path } }), /not valid JSON5/);
  });

  it('maps SWITCHBOARD_* names to dotted camelCase paths, leaving reserved ones alone', () => {
    const map = envOverrides({
      SWITCHBOARD_HOME: '/x',
      SWITCHBOARD_IDLE_TIMEOUT_MINUTES: '5',
      SWITCHBOARD_HARNESSES__CODEX__SANDBOX: 'read-only',
    });
    assert.deepEqual([...map.keys()], ['idleTimeoutMinutes', 'harnesses.codex.sandbox']);
    assert.equal(map.get('idleTimeoutMinutes')?.value, 5);
  });

  it('refuses __proto__, constructor and prototype in a --set path, naming the key, and leaves Object.prototype alone', () => {
    const env = { SWITCHBOARD_HOME: dir.path };
    for (const key of [
      '__proto__.polluted',
      'constructor.prototype.polluted',
      'gateway.__proto__.polluted',
      'prototype',
    ]) {
      assert.throws(
        () => loadConfig({ env, overrides: { [key]: 1 } }),
        (error: Error & { field?: string }) => {
          assert.match(
            error.message,
            new RegExp(`command line: config key "${key.replace(/[.]/g, '\\.')}" may not contain`),
          );
          assert.equal(error.field, key);
          return true;
        },
      );
    }
    assert.equal(Object.hasOwn(Object.prototype, 'polluted'), false);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });

  it('refuses a SWITCHBOARD_* variable whose path reaches the prototype, naming the variable', () => {
    assert.throws(
      () => loadConfig({ env: { SWITCHBOARD_HOME: dir.path, SWITCHBOARD_CONSTRUCTOR__PROTOTYPE__X: '1' } }),
      /SWITCHBOARD_CONSTRUCTOR__PROTOTYPE__X: config key "constructor\.prototype\.x" may not contain "constructor"/,
    );
    assert.equal(Object.hasOwn(Object.prototype, 'x'), false);
  });

  it('follows only own properties when setting a path over values from the file', () => {
    writeFileSync(join(dir.path, 'config.json5'), '{ timings: { safetyNetMs: 20000 } }');
    const { config } = loadConfig({
      env: { SWITCHBOARD_HOME: dir.path },
      overrides: { 'timings.fsyncBatchMs': 5, 'harnesses.codex.sandbox': 'read-only' },
    });
    assert.equal(config.timings.safetyNetMs, 20_000);
    assert.equal(config.timings.fsyncBatchMs, 5);
    assert.equal(config.harnesses.codex.sandbox, 'read-only');
  });

  it('reports an unknown SWITCHBOARD_* variable as an unknown environment variable, not as a config.json5 error', () => {
    writeFileSync(join(dir.path, 'config.json5'), '{ maxSessions: 3 }');
    assert.throws(
      () => loadConfig({ env: { SWITCHBOARD_HOME: dir.path, SWITCHBOARD_MAX_SESIONS: '4' } }),
      (error: Error) => {
        assert.match(
          error.message,
          /unknown environment variable SWITCHBOARD_MAX_SESIONS: there is no config key "maxSesions"/,
        );
        assert.doesNotMatch(error.message, /config\.json5/);
        return true;
      },
    );
    assert.throws(
      () => loadConfig({ env: { SWITCHBOARD_HOME: dir.path, SWITCHBOARD_GATEWAY__PORTT: '1' } }),
      /unknown environment variable SWITCHBOARD_GATEWAY__PORTT: there is no config key "gateway\.portt"/,
    );
    assert.throws(
      () => loadConfig({ env: { SWITCHBOARD_HOME: dir.path, SWITCHBOARD_NOPE__DEEP: '1' } }),
      /unknown environment variable SWITCHBOARD_NOPE__DEEP: there is no config key "nope"/,
    );
    assert.throws(
      () => loadConfig({ env: { SWITCHBOARD_HOME: dir.path }, overrides: { maxSesions: 1 } }),
      /maxSesions: unknown config key \[from command line\]/,
    );
  });

  it('does not read SWITCHBOARD_FAULT (the fault-injection switch) as a config key', () => {
    assert.equal(loadConfig({ env: { SWITCHBOARD_HOME: dir.path, SWITCHBOARD_FAULT: 'x' } }).config.maxSessions, 5);
  });
});
