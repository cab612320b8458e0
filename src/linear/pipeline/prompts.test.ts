import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { dispatchRecord } from '../../../test/support/dispatch-record.ts';
import { makeIssue } from '../../../test/support/fake-linear-api.ts';
import { linearPipelineSchema } from '../../core/config-linear-pipeline.ts';
import { AppError } from '../../core/errors.ts';
import type { DispatchRecord } from '../../store/linear-dispatch-types.ts';
import { auditPrompt, promptVars, workerPrompt } from './prompt-vars.ts';
import {
  DEFAULT_PROMPTS,
  mergePrompts,
  parsePromptsFile,
  renderTemplate,
  sanitizePromptInput,
  VERDICT_INSTRUCTION,
} from './prompts.ts';

const pc = linearPipelineSchema.parse({ maxAttempts: 3, promptInputMaxChars: 200 });

function dispatch(fields: Partial<DispatchRecord> = {}): DispatchRecord {
  return dispatchRecord({
    issueId: 'issue-eng-1',
    title: 'Add greeting',
    agentSessionId: 'as-1',
    tier: 'junior',
    tierReason: 'estimate 1',
    model: 'haiku',
    auditModel: 'haiku',
    branch: 'agent/eng-1',
    queueSeq: 1,
    ...fields,
  });
}

describe('prompts', () => {
  it('renders {{var}} in one pass: unknown names are empty, values are never expanded again', () => {
    assert.equal(renderTemplate('a {{x}} b {{ y }} c {{nope}}', { x: '{{y}}', y: 'Y' }), 'a {{y}} b Y c ');
  });

  it('sanitizes user text: length cap with a marker, {{ neutralised', () => {
    assert.equal(sanitizePromptInput('hi {{identifier}}', 100), 'hi { {identifier}}');
    const long = sanitizePromptInput('x'.repeat(50), 10);
    assert.match(long, /^x{10}\n\[… cut: 40 more characters\]$/);
  });

  it('merges prompts.yaml over the defaults one section at a time, ignoring foreign sections', () => {
    const file = parsePromptsFile(
      'worker:\n  task: "Do {{identifier}}"\ntiers:\n  senior: be careful\nplanner:\n  system: not ours\n',
      'prompts.yaml',
    );
    const merged = mergePrompts(DEFAULT_PROMPTS, file);
    assert.equal(merged.worker.task, 'Do {{identifier}}');
    assert.equal(merged.worker.system, DEFAULT_PROMPTS.worker.system);
    assert.equal(merged.tiers.senior, 'be careful');
    assert.equal(merged.tiers.junior, DEFAULT_PROMPTS.tiers.junior);
    assert.deepEqual(mergePrompts(DEFAULT_PROMPTS, parsePromptsFile('', 'p')), DEFAULT_PROMPTS);
  });

  it('refuses an invalid prompts.yaml with an error naming the file and the field', () => {
    const refuse = (text: string, pattern: RegExp) =>
      assert.throws(
        () => parsePromptsFile(text, '/repo/.switchboard/prompts.yaml'),
        (e: unknown) => e instanceof AppError && e.kind === 'invalid_input' && pattern.test(e.message),
      );
    refuse('worker:\n  task: [1, 2]\n', /prompts\.yaml: worker\.task/);
    refuse('audit:\n  verdict: x\n', /prompts\.yaml: audit.*verdict/);
    refuse('worker: [unclosed\n', /not valid YAML/);
  });

  it('builds the worker prompt from the issue with sanitized user text, adding the rework addendum while gaps are open', () => {
    const issue = makeIssue({
      identifier: 'ENG-1',
      title: 'Add {{greeting}}',
      description: 'Say hello.',
      comments: [{ id: 'c', body: 'please hurry', user: { id: 'u', name: 'Ada' }, createdAt: '' }],
    });
    const d = dispatch({
      attempt: 2,
      roundStart: 1,
      context: { guidance: ['use tabs'], userMessages: ['and a test'], lastGaps: ['no test'] },
    });
    const vars = promptVars(d, issue, DEFAULT_PROMPTS, pc);
    assert.equal(vars.title, 'Add { {greeting}}');
    assert.equal(vars.attempt, '2');
    const { system, task } = workerPrompt(DEFAULT_PROMPTS, vars, true);
    assert.match(system, /ENG-1 in a dedicated git worktree at \/repo\/wt \(branch agent\/eng-1\)/);
    assert.match(system, /junior-level work/);
    assert.match(task, /Say hello\./);
    assert.match(task, /- use tabs/);
    assert.match(task, /- Ada: please hurry/);
    assert.match(task, /- and a test/);
    assert.match(task, /## Rework \(attempt 2 of 3\)[\s\S]*- no test/);
    assert.doesNotMatch(workerPrompt(DEFAULT_PROMPTS, vars, false).task, /Rework/);
  });

  it('always ends the audit task with the verdict instruction and tells the auditor it may not edit', () => {
    const issue = makeIssue({ identifier: 'ENG-1' });
    const custom = mergePrompts(DEFAULT_PROMPTS, { audit: { task: 'Check {{identifier}}.' } });
    const vars = promptVars(dispatch(), issue, custom, pc, { workerReport: 'I did it' });
    const { system, task } = auditPrompt(custom, vars);
    assert.ok(task.endsWith(VERDICT_INSTRUCTION));
    assert.ok(task.startsWith('Check ENG-1.'));
    assert.match(system, /may only read files and run tests/);
    assert.match(system, /Never edit, create or delete files/);
    const defaults = auditPrompt(DEFAULT_PROMPTS, vars);
    assert.match(defaults.task, /I did it/);
    assert.equal(defaults.task.split(VERDICT_INSTRUCTION).length, 2, 'instruction appears once');
  });
});
