import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { storedSession } from '../../test/support/stored-session.ts';
import { launchedText } from './messages.ts';

describe('launchedText', () => {
  it('names a launch, a resume, a fork and a continuation on another node apart', () => {
    const base = storedSession({ name: 'worker', prompt: 'fix the parser' });
    assert.equal(launchedText(base, 'launch'), '↩️ [worker] Launched:\nfix the parser');
    assert.equal(launchedText(base, 'resume'), '↩️ [worker] Resumed:\nfix the parser');
    assert.match(launchedText({ ...base, resumedFrom: 'abc', forked: true }, 'launch'), /Resumed as a fork of abc:/);
    assert.match(launchedText({ ...base, resumedFrom: 'abc', forked: false }, 'launch'), /Continued from abc:/);
  });
});
