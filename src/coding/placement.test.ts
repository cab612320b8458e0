// Placement in the cluster: which node could run a launch, why none could (the first constraint no node meets), and the
// prompt that carries a lost node's session to another node (resume --anywhere).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { NodeRecord } from '../store/cluster-nodes.ts';
import { nodeCanRun, placementRefusal } from './placement.ts';
import { resumeAnywherePrompt } from './resume-anywhere.ts';

function node(name: string, labels: string[], workspaces: string[], harnesses: NodeRecord['harnesses'] = ['claude']) {
  return {
    name,
    incarnation: 'i',
    labels,
    harnesses,
    workspaces,
    maxSessions: 2,
    url: null,
    status: 'up',
    startedAt: 0,
    heartbeatAt: 0,
    downAt: null,
    takenOverAt: null,
  } satisfies NodeRecord;
}

const nodes = [node('alpha', ['linux'], ['/repos']), node('beta', ['gpu', 'linux'], ['/data/'], ['claude', 'codex'])];

describe('placement', () => {
  it('a node can run a launch with its harness, every label, `on` naming it and a workspace holding the workdir', () => {
    assert.equal(nodeCanRun(nodes[0] ?? node('x', [], []), { harness: 'claude', workdir: '/repos/app' }), true);
    assert.equal(nodeCanRun(nodes[0] ?? node('x', [], []), { harness: 'claude', workdir: '/reposx' }), false);
    assert.equal(
      nodeCanRun(nodes[1] ?? node('x', [], []), { harness: 'codex', workdir: '/data', labels: ['gpu'] }),
      true,
    );
    assert.equal(
      nodeCanRun(nodes[1] ?? node('x', [], []), { harness: 'claude', workdir: '/data', on: 'alpha' }),
      false,
    );
  });

  it('refuses naming the first constraint no node meets, and accepts what one node could run', () => {
    const why = (ask: Parameters<typeof placementRefusal>[1]) => placementRefusal(nodes, ask)?.message ?? null;
    assert.match(
      why({ harness: 'claude', workdir: '/repos', on: 'gamma' }) ?? '',
      /no node named "gamma".*alpha, beta/,
    );
    assert.match(why({ harness: 'gemini', workdir: '/repos' }) ?? '', /no node of the cluster can run the gemini/);
    assert.match(why({ harness: 'codex', workdir: '/repos', on: 'alpha' }) ?? '', /node alpha can run the codex/);
    assert.match(why({ harness: 'claude', workdir: '/repos', labels: ['tpu'] }) ?? '', /labels tpu/);
    assert.match(why({ harness: 'claude', workdir: '/data/x', labels: ['gpu'], on: 'alpha' }) ?? '', /labels gpu/);
    assert.match(
      why({ harness: 'claude', workdir: '/repos', labels: ['gpu'] }) ?? '',
      /holds \/repos in its workspaces/,
    );
    assert.equal(why({ harness: 'claude', workdir: '/data/set', labels: ['gpu'] }), null);
    assert.equal(placementRefusal(nodes, { harness: 'claude', workdir: '/repos' })?.field, undefined);
    assert.equal(placementRefusal(nodes, { harness: 'claude', workdir: '/elsewhere' })?.field, 'workdir');
  });

  it('resume --anywhere carries the old task, its last output blocks and what to do next', () => {
    const old = { name: 'fix', prompt: 'fix the parser', node: 'beta' };
    const blocks = ['one', 'two', 'three', 'four', 'five', 'six'];
    const prompt = resumeAnywherePrompt(old, blocks, 'add a test');
    assert.match(prompt, /continuing the coding session "fix", which ran on node beta/);
    assert.match(prompt, /Its task was:\nfix the parser/);
    assert.doesNotMatch(prompt, /\bone\b/);
    assert.match(prompt, /---\ntwo\n---\nthree\n---\nfour\n---\nfive\n---\nsix\n---/);
    assert.match(prompt, /Now: add a test$/);
    assert.match(
      resumeAnywherePrompt(old, [], undefined),
      /produced no output yet[\s\S]*Now: continue where it left off/,
    );
  });
});
