import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { linearPipelineSchema } from '../../core/config-linear-pipeline.ts';
import { assessTier, chooseRunners, harnessFromLabels } from './tier.ts';

const pc = linearPipelineSchema.parse({});
const rules = pc.tierRules;
const labels = (...names: string[]) => names.map((name, i) => ({ id: `l${i}`, name }));

describe('assessTier', () => {
  it('lets an explicit tier label win over estimate and size (highest of several)', () => {
    assert.deepEqual(
      assessTier({ labels: labels('bug', 'Tier:Junior'), estimate: 8, description: 'x'.repeat(9_000) }, rules),
      {
        tier: 'junior',
        reason: 'label tier:junior',
      },
    );
    assert.equal(
      assessTier({ labels: labels('tier:junior', 'tier/senior'), estimate: null, description: '' }, rules).tier,
      'senior',
    );
  });

  it('uses the estimate when there is one, raised one level for a very long description', () => {
    const t = (estimate: number, size = 10) =>
      assessTier({ labels: [], estimate, description: 'x'.repeat(size) }, rules).tier;
    assert.deepEqual(
      [t(0), t(1), t(2), t(3), t(5), t(13)],
      ['junior', 'junior', 'medior', 'medior', 'senior', 'senior'],
    );
    assert.equal(t(1, 3_000), 'medior');
    assert.equal(t(3, 3_000), 'senior');
  });

  it('falls back to the description size', () => {
    const t = (size: number) =>
      assessTier({ labels: [], estimate: null, description: `  ${'x'.repeat(size)}  ` }, rules).tier;
    assert.deepEqual([t(0), t(600), t(601), t(2_500), t(2_501)], ['junior', 'junior', 'medior', 'medior', 'senior']);
  });
});

describe('chooseRunners', () => {
  const base = { profile: undefined, pipeline: pc, defaultHarness: 'claude' as const };

  it('selects the tier model on the tier harness by default', () => {
    const r = chooseRunners({ ...base, tier: 'senior', labels: [] });
    assert.deepEqual(r.worker, { harness: 'claude', model: 'opus' });
    assert.deepEqual(r.audit, { harness: 'claude', model: 'opus' });
    assert.equal(chooseRunners({ ...base, tier: 'junior', labels: [] }).worker.model, 'haiku');
  });

  it('lets a harness label win, dropping a model that belongs to another harness', () => {
    const r = chooseRunners({ ...base, tier: 'senior', labels: labels('harness:codex') });
    assert.deepEqual(r.worker, { harness: 'codex', model: null });
    assert.equal(r.harnessSource, 'label');
    assert.equal(harnessFromLabels(labels('Harness: Gemini')), 'gemini');
  });

  it('takes harness and model from the profile, then from config tiers', () => {
    const r = chooseRunners({
      ...base,
      tier: 'junior',
      labels: [],
      profile: { harness: 'gemini', model: 'gemini-2.5-pro' },
    });
    assert.deepEqual(r.worker, { harness: 'gemini', model: 'gemini-2.5-pro' });
    const custom = linearPipelineSchema.parse({
      tiers: { medior: { harness: 'codex', model: 'gpt-5-codex' } },
      audit: { harness: 'gemini', model: 'gemini-2.5-flash' },
    });
    const c = chooseRunners({ ...base, pipeline: custom, tier: 'medior', labels: [] });
    assert.deepEqual(c.worker, { harness: 'codex', model: 'gpt-5-codex' });
    assert.deepEqual(c.audit, { harness: 'gemini', model: 'gemini-2.5-flash' });
  });

  it('falls back to the default harness without a tier harness', () => {
    const custom = linearPipelineSchema.parse({ tiers: { junior: { model: 'small' } }, defaultHarness: 'gemini' });
    assert.deepEqual(chooseRunners({ ...base, pipeline: custom, tier: 'junior', labels: [] }).worker, {
      harness: 'gemini',
      model: 'small',
    });
  });
});
