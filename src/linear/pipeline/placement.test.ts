import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cannotRun, refusalFor } from './placement.ts';

const d = { repoPath: '/src/app', harness: 'codex', auditHarness: 'claude' };

describe('dispatch placement', () => {
  it('a node can run a dispatch whose repository is a workspace or under one, with both harnesses', () => {
    assert.equal(cannotRun({ name: 'a', workspaces: ['/src'], harnesses: ['claude', 'codex'] }, d), null);
    assert.equal(cannotRun({ name: 'a', workspaces: ['/src/app/'], harnesses: ['claude', 'codex'] }, d), null);
    assert.equal(
      cannotRun({ name: 'a', workspaces: ['/src/ap'], harnesses: ['claude', 'codex'] }, d),
      '/src/app is not in its workspaces',
    );
    assert.equal(cannotRun({ name: 'a', workspaces: ['/'], harnesses: ['claude'] }, d), 'it has no codex harness');
  });

  it('refuses only when no node can, naming each node’s reason', () => {
    const nodes = [
      { name: 'a', workspaces: ['/other'], harnesses: ['claude', 'codex'] },
      { name: 'b', workspaces: ['/src'], harnesses: ['claude'] },
    ];
    assert.equal(
      refusalFor(nodes, d),
      "No node of the cluster can run this dispatch: it needs /src/app in a node's workspaces and the codex and claude harness (a: /src/app is not in its workspaces; b: it has no codex harness).",
    );
    assert.equal(refusalFor([...nodes, { name: 'c', workspaces: ['/src'], harnesses: ['codex', 'claude'] }], d), null);
    assert.match(refusalFor([], d) ?? '', /no node has joined the cluster/);
  });
});
