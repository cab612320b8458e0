import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { GeminiTurnArgs } from './gemini-args.ts';
import { geminiApprovalMode, geminiArgs, promptWithSystem } from './gemini-args.ts';

const base: GeminiTurnArgs = {
  prompt: 'hello',
  newSessionId: 'new-uuid',
  approvalMode: 'yolo',
  permissionMode: 'bypassPermissions',
};

test('first turn: --prompt=, stream-json, approval mode, --skip-trust, --session-id', () => {
  assert.deepEqual(geminiArgs(base), [
    '--prompt=hello',
    '--output-format',
    'stream-json',
    '--approval-mode',
    'yolo',
    '--skip-trust',
    '--session-id',
    'new-uuid',
  ]);
});

test('later turns resume by id and ignore the new id', () => {
  const args = geminiArgs({ ...base, resumeId: 'sid-1' });
  assert.deepEqual(args.slice(-2), ['--resume', 'sid-1']);
  assert.equal(args.includes('--session-id'), false);
});

test('model → -m', () => {
  assert.deepEqual(geminiArgs({ ...base, model: 'gemini-2.5-pro' }).slice(-2), ['-m', 'gemini-2.5-pro']);
  assert.equal(geminiArgs(base).includes('-m'), false);
});

test('a prompt starting with "-" stays one --prompt= argument', () => {
  assert.equal(geminiArgs({ ...base, prompt: '-y --model x\nline 2' })[0], '--prompt=-y --model x\nline 2');
});

test('approval mode: the configured one, except plan → default', () => {
  assert.equal(geminiApprovalMode('auto_edit', 'default'), 'auto_edit');
  assert.equal(geminiApprovalMode('yolo', 'plan'), 'default');
  const args = geminiArgs({ ...base, permissionMode: 'plan' });
  assert.equal(args[args.indexOf('--approval-mode') + 1], 'default');
});

test('system prompt goes in front of the first prompt only', () => {
  assert.equal(promptWithSystem('do it', undefined), 'do it');
  assert.equal(promptWithSystem('do it', '  '), 'do it');
  const first = geminiArgs({ ...base, systemPrompt: 'Be brief.' })[0];
  assert.equal(first, '--prompt=<system_instructions>\nBe brief.\n</system_instructions>\n\nhello');
  assert.equal(geminiArgs({ ...base, systemPrompt: 'Be brief.', resumeId: 'sid-1' })[0], '--prompt=hello');
});
