import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { FAKE_IDS } from '../../test/support/fake-linear.ts';
import type { LinearGlueFixture } from '../../test/support/linear-glue-fixture.ts';
import { linearGlueFixture } from '../../test/support/linear-glue-fixture.ts';
import { openTestStore } from '../../test/support/test-store.ts';
import { linearTriageSchema } from '../core/config-linear-agents.ts';
import { silentLogger } from '../core/logger.ts';
import { jsonCandidates, parseTriageAnswer, snapEstimate, Triage } from './triage.ts';

describe('parseTriageAnswer', () => {
  it('reads a bare object after prose, a fenced block, and string numbers', () => {
    const bare = parseTriageAnswer(
      'Sure! Here is my triage: {"estimate": 3, "labelIds": ["l1"], "priority": 2, "assessment": "A checkout bug."} Hope it helps.',
    );
    assert.deepEqual(bare, {
      ok: true,
      answer: { estimate: 3, labelIds: ['l1'], priority: 2, assessment: 'A checkout bug.' },
    });
    const fenced = parseTriageAnswer(
      '```json\n{"estimate": "5", "priority": "1", "assessment": "Urgent {tricky} case."}\n```',
    );
    assert.equal(fenced.ok, true);
    if (fenced.ok) {
      assert.equal(fenced.answer.estimate, 5);
      assert.equal(fenced.answer.priority, 1);
      assert.deepEqual(fenced.answer.labelIds, []);
    }
  });

  it('takes the last usable object and accepts null estimate and priority', () => {
    const result = parseTriageAnswer(
      '{"draft": true} then {"estimate": null, "labelIds": [], "priority": null, "assessment": "Needs more info."}',
    );
    assert.deepEqual(result, {
      ok: true,
      answer: { estimate: null, labelIds: [], priority: null, assessment: 'Needs more info.' },
    });
  });

  it('says what is wrong when nothing fits', () => {
    assert.deepEqual(parseTriageAnswer('I think it is a 3.'), { ok: false, error: 'no JSON object in the answer' });
    const bad = parseTriageAnswer('{"estimate": 2, "priority": 7, "assessment": "x"}');
    assert.equal(bad.ok, false);
    if (!bad.ok) assert.match(bad.error, /priority/);
    assert.equal(parseTriageAnswer('{"estimate": 2, "priority": 2, "assessment": ""}').ok, false);
  });

  it('finds objects with braces inside strings', () => {
    assert.deepEqual(jsonCandidates('x {"a": "}{", "b": {"c": 1}} y'), ['{"a": "}{", "b": {"c": 1}}']);
  });

  it('snaps an estimate to the allowed scale', () => {
    assert.equal(snapEstimate(4, [0, 1, 2, 3, 5, 8]), 3);
    assert.equal(snapEstimate(7, [0, 1, 2, 3, 5, 8]), 8);
    assert.equal(snapEstimate(2, [0, 1, 2, 3, 5, 8]), 2);
  });
});

describe('Triage against the fake Linear', () => {
  let fx: LinearGlueFixture;

  beforeEach(async () => {
    fx = await linearGlueFixture({}, undefined, {}, (path) => openTestStore(path));
  });
  afterEach(async () => {
    await fx.close();
  });

  function labelId(name: string): string {
    const label = [...fx.fake.workspace.labels.values()].find((l) => l.name === name);
    assert.ok(label);
    return label.id;
  }

  it('applies the answer with one issueUpdate and posts the assessment as a comment', async () => {
    const issue = fx.fake.workspace.addIssue({
      teamId: FAKE_IDS.team,
      title: 'Checkout button does nothing on Android',
      description: 'Tapping Pay does nothing.',
    });
    const bug = labelId('Bug');
    fx.inference.script({
      text: `Here you go:\n\`\`\`json\n{"estimate": 4, "labelIds": ["${bug}", "not-a-label"], "priority": 2, "assessment": "Likely a click handler bound too late."}\n\`\`\``,
    });
    const triage = new Triage({
      api: fx.api,
      inference: fx.inference,
      config: linearTriageSchema.parse({}),
      logger: silentLogger(),
    });
    const result = await triage.run(issue.id);
    assert.equal(result.outcome, 'applied');
    const updates = fx.fake.mutations.filter((m) => m.name === 'issueUpdate');
    assert.equal(updates.length, 1, 'one issueUpdate');
    assert.deepEqual(updates[0]?.variables.input, { estimate: 3, priority: 2, labelIds: [bug] });
    assert.equal(issue.estimate, 3);
    assert.equal(issue.priority, 2);
    const comments = fx.appComments(issue.id);
    assert.equal(comments.length, 1);
    assert.equal(
      comments[0]?.body,
      '**Triage**: Likely a click handler bound too late.\n\n_Set: estimate 3 · priority high · labels Bug_',
    );
    // The model saw the team's labels with their ids, and the issue.
    const prompt = fx.inference.requests[0]?.messages[0];
    assert.ok(prompt && prompt.role === 'user');
    assert.match(prompt.content, new RegExp(`- ${bug}: Bug`));
    assert.match(prompt.content, /Tapping Pay does nothing/);
  });

  it('keeps what a person already set: estimate, priority and labels are only added to', async () => {
    const feature = labelId('Feature');
    const bug = labelId('Bug');
    const issue = fx.fake.workspace.addIssue({
      teamId: FAKE_IDS.team,
      title: 'Set by hand',
      estimate: 8,
      priority: 1,
      labelIds: [feature],
    });
    fx.inference.script({ text: `{"estimate": 1, "labelIds": ["${bug}"], "priority": 4, "assessment": "Small."}` });
    await new Triage({
      api: fx.api,
      inference: fx.inference,
      config: linearTriageSchema.parse({}),
      logger: silentLogger(),
    }).run(issue.id);
    assert.deepEqual(fx.fake.mutations.find((m) => m.name === 'issueUpdate')?.variables.input, {
      labelIds: [feature, bug],
    });
    assert.equal(issue.estimate, 8);
    assert.equal(issue.priority, 1);
  });

  it('throws on an unusable answer (the job runner retries and finally says so) and skips without a model', async () => {
    const issue = fx.fake.workspace.addIssue({ teamId: FAKE_IDS.team, title: 'Vague' });
    fx.inference.script({ text: 'No idea, sorry.' });
    const triage = new Triage({
      api: fx.api,
      inference: fx.inference,
      config: linearTriageSchema.parse({}),
      logger: silentLogger(),
    });
    await assert.rejects(triage.run(issue.id), /could not be used: no JSON object/);
    assert.equal(fx.fake.mutations.length, 0, 'nothing was written');
    fx.inference.available = false;
    assert.deepEqual(await triage.run(issue.id), { outcome: 'no_inference' });
    assert.deepEqual(
      await new Triage({
        api: fx.api,
        inference: fx.inference,
        config: linearTriageSchema.parse({ enabled: false }),
        logger: silentLogger(),
      }).run(issue.id),
      {
        outcome: 'disabled',
      },
    );
  });
});
