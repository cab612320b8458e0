import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
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
    writeFileSync(join(dir.path, 'config.json5'), `{ // comment\n maxSessions: 3, workspaces: ['~/src'], agentChannels: {'~/src/app': 'telegram|1'}, }`);
    const { config } = loadConfig({
      env: { SWITCHBOARD_HOME: dir.path, SWITCHBOARD_MAX_SESSIONS: '4', SWITCHBOARD_TIMINGS__SAFETY_NET_MS: '45000', SWITCHBOARD_PORT: '0' },
      overrides: { maxSessions: 7 },
    });
    assert.equal(config.maxSessions, 7);
    assert.equal(config.timings.safetyNetMs, 45_000);
    assert.equal(config.gateway.port, 0);
    assert.deepEqual(config.workspaces, [join(homedir(), 'src')]);
    assert.deepEqual(config.agentChannels, { [join(homedir(), 'src/app')]: 'telegram|1' });
  });

  it('names the key, the reason and the source of a bad value', () => {
    assert.throws(() => loadConfig({ env: { SWITCHBOARD_HOME: dir.path, SWITCHBOARD_MAX_SESSIONS: 'lots' } }), /maxSessions: .*number.*\[from SWITCHBOARD_MAX_SESSIONS\]/);
    writeFileSync(join(dir.path, 'config.json5'), '{ maxSesions: 3 }');
    assert.throws(() => loadConfig({ env: { SWITCHBOARD_HOME: dir.path } }), /Unrecognized key.*maxSesions/);
    writeFileSync(join(dir.path, 'config.json5'), '{ maxSessions: ');
    assert.throws(() => loadConfig({ env: { SWITCHBOARD_HOME: dir.path } }), /not valid JSON5/);
  });

  it('maps SWITCHBOARD_* names to dotted camelCase paths, leaving reserved ones alone', () => {
    const map = envOverrides({ SWITCHBOARD_HOME: '/x', SWITCHBOARD_IDLE_TIMEOUT_MINUTES: '5', SWITCHBOARD_HARNESSES__CODEX__SANDBOX: 'read-only' });
    assert.deepEqual([...map.keys()], ['idleTimeoutMinutes', 'harnesses.codex.sandbox']);
    assert.equal(map.get('idleTimeoutMinutes')?.value, 5);
  });
});
