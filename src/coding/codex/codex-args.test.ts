import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { CodexTurnArgs } from './codex-args.ts';
import {
  appServerArgs,
  codexApprovalMode,
  codexArgs,
  codexSandboxArgs,
  configOverride,
  extraOverrides,
  providerOverrides,
  tomlString,
  tomlValue,
} from './codex-args.ts';

const base: CodexTurnArgs = {
  prompt: 'hello',
  workdir: '/w',
  permissionMode: 'bypassPermissions',
  config: { config: {} },
};

test('first turn: exec --json --skip-git-repo-check -C, bypass flag, then -- and the prompt', () => {
  assert.deepEqual(codexArgs(base), [
    'exec',
    '--json',
    '--skip-git-repo-check',
    '-C',
    '/w',
    '--dangerously-bypass-approvals-and-sandbox',
    '--',
    'hello',
  ]);
});

test('resume: every option before `resume <thread_id>`, the prompt after --', () => {
  const args = codexArgs({
    ...base,
    resumeId: 'thread-1',
    model: 'gpt-x',
    config: { config: { 'features.plugins': false } },
  });
  assert.deepEqual(args, [
    'exec',
    '--json',
    '--skip-git-repo-check',
    '-C',
    '/w',
    '-m',
    'gpt-x',
    '--dangerously-bypass-approvals-and-sandbox',
    '-c',
    'features.plugins=false',
    'resume',
    'thread-1',
    '--',
    'hello',
  ]);
});

test('a prompt starting with "-" stays one positional argument after --', () => {
  const args = codexArgs({ ...base, prompt: '-m evil --json\nline 2' });
  assert.deepEqual(args.slice(-2), ['--', '-m evil --json\nline 2']);
  assert.equal(args.filter((a) => a === '-m').length, 0);
});

test('permission modes: plan → read-only always; bypass → the configured sandbox if any; the rest → configured or workspace-write', () => {
  assert.deepEqual(codexSandboxArgs('plan', 'danger-full-access'), ['-s', 'read-only']);
  assert.deepEqual(codexSandboxArgs('bypassPermissions', undefined), ['--dangerously-bypass-approvals-and-sandbox']);
  assert.deepEqual(codexSandboxArgs('bypassPermissions', 'workspace-write'), ['-s', 'workspace-write']);
  for (const mode of ['default', 'acceptEdits', 'dontAsk', 'auto'] as const) {
    assert.deepEqual(codexSandboxArgs(mode, undefined), ['-s', 'workspace-write']);
    assert.deepEqual(codexSandboxArgs(mode, 'read-only'), ['-s', 'read-only']);
  }
  assert.deepEqual(codexArgs({ ...base, permissionMode: 'plan' }).slice(5, 7), ['-s', 'read-only']);
});

test('provider: -c model_provider and model_providers.<id>.* with TOML-quoted values; env_key only when set', () => {
  const provider = {
    id: 'mock',
    baseUrl: 'http://127.0.0.1:8789/v1',
    wireApi: 'responses' as const,
    envKey: 'MOCK_KEY',
  };
  assert.deepEqual(providerOverrides(provider), [
    '-c',
    'model_provider="mock"',
    '-c',
    'model_providers.mock.name="mock"',
    '-c',
    'model_providers.mock.base_url="http://127.0.0.1:8789/v1"',
    '-c',
    'model_providers.mock.wire_api="responses"',
    '-c',
    'model_providers.mock.env_key="MOCK_KEY"',
  ]);
  const named = providerOverrides({ id: 'p', name: 'My "proxy"', baseUrl: 'http://x/v1', wireApi: 'responses' });
  assert.ok(named.includes('model_providers.p.name="My \\"proxy\\""'));
  assert.equal(
    named.some((a) => a.includes('env_key')),
    false,
  );
  assert.deepEqual(providerOverrides(undefined), []);
});

test('TOML values: strings escaped, numbers and booleans bare, non-finite numbers and bad keys rejected', () => {
  assert.equal(tomlString('a\\b"c\nd\te\u0001'), '"a\\\\b\\"c\\nd\\te\\u0001"');
  assert.equal(tomlValue(3), '3');
  assert.equal(tomlValue(0.5), '0.5');
  assert.equal(tomlValue(true), 'true');
  assert.throws(() => tomlValue(Number.POSITIVE_INFINITY), /finite/);
  assert.deepEqual(configOverride('model_reasoning_effort', 'high'), ['-c', 'model_reasoning_effort="high"']);
  assert.throws(() => configOverride('a=b', 1), /invalid key/);
  assert.throws(() => configOverride('', 1), /invalid key/);
  assert.throws(() => codexArgs({ ...base, config: { config: { 'x\ny': 1 } } }), /invalid key/);
});

test('system prompt: -c developer_instructions on a new thread only, appended to a configured one', () => {
  const first = codexArgs({ ...base, systemPrompt: 'Be "brief".\nAlways.' });
  assert.deepEqual(first.slice(-4), ['-c', 'developer_instructions="Be \\"brief\\".\\nAlways."', '--', 'hello']);
  assert.equal(
    codexArgs({ ...base, systemPrompt: 'Be brief.', resumeId: 't' }).some((a) =>
      a.startsWith('developer_instructions'),
    ),
    false,
  );
  assert.deepEqual(extraOverrides({ developer_instructions: 'House rules.', model_verbosity: 'low' }, 'Be brief.'), [
    '-c',
    'model_verbosity="low"',
    '-c',
    'developer_instructions="House rules.\\n\\nBe brief."',
  ]);
  assert.deepEqual(extraOverrides({ developer_instructions: 'House rules.' }, undefined), [
    '-c',
    'developer_instructions="House rules."',
  ]);
  assert.deepEqual(extraOverrides({}, '   '), []);
});

test('model → -m before the sandbox flags', () => {
  const args = codexArgs({ ...base, model: 'o4-mini', permissionMode: 'default' });
  assert.deepEqual(args.slice(5, 9), ['-m', 'o4-mini', '-s', 'workspace-write']);
});

test('codexApprovalMode: bypassPermissions, dontAsk and plan never ask (exec); the others ask through the app-server', () => {
  for (const mode of ['bypassPermissions', 'dontAsk', 'plan'] as const)
    assert.equal(codexApprovalMode(mode, undefined), null);
  assert.deepEqual(codexApprovalMode('default', undefined), {
    approvalPolicy: 'untrusted',
    sandbox: 'workspace-write',
    acceptEditsInWorkdir: false,
  });
  assert.deepEqual(codexApprovalMode('acceptEdits', 'read-only'), {
    approvalPolicy: 'untrusted',
    sandbox: 'read-only',
    acceptEditsInWorkdir: true,
  });
  assert.deepEqual(codexApprovalMode('auto', 'danger-full-access'), {
    approvalPolicy: 'on-request',
    sandbox: 'danger-full-access',
    acceptEditsInWorkdir: false,
  });
});

test('appServerArgs: app-server, the provider and extra overrides, the system prompt as developer instructions', () => {
  const provider = { id: 'p', baseUrl: 'http://127.0.0.1:1/v1', wireApi: 'responses' as const };
  assert.deepEqual(appServerArgs({ provider, config: { 'features.plugins': false } }, 'Be brief.'), [
    'app-server',
    '-c',
    'model_provider="p"',
    '-c',
    'model_providers.p.name="p"',
    '-c',
    'model_providers.p.base_url="http://127.0.0.1:1/v1"',
    '-c',
    'model_providers.p.wire_api="responses"',
    '-c',
    'features.plugins=false',
    '-c',
    'developer_instructions="Be brief."',
  ]);
  assert.deepEqual(appServerArgs({ config: {} }, undefined), ['app-server']);
});
