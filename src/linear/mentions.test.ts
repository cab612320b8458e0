import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { FAKE_IDS } from '../../test/support/fake-linear.ts';
import type { LinearGlueFixture } from '../../test/support/linear-glue-fixture.ts';
import { linearGlueFixture } from '../../test/support/linear-glue-fixture.ts';
import { ScriptedHarness } from '../../test/support/scripted-harness.ts';
import { openTestStore } from '../../test/support/test-store.ts';
import { createClaudeHarness } from '../coding/claude/claude-harness.ts';
import { CodeRunner } from '../coding/code-runner.ts';
import { SessionManager } from '../coding/session-manager.ts';
import { ManualClock } from '../core/clock.ts';
import { agentProfileSchema } from '../core/config-linear-agents.ts';
import { silentLogger } from '../core/logger.ts';
import { CodingSessionStore } from '../store/coding-sessions.ts';
import { SessionLogs } from '../store/session-logs.ts';
import { MentionResponder, profileAliases, profileForMentions } from './mentions.ts';

const FAKE_CLAUDE = fileURLToPath(new URL('../../test/support/fake-claude.mjs', import.meta.url));

describe('mention routing', () => {
  it('finds the first mentioned profile by its aliases (default: its name)', async () => {
    const profiles = {
      qa: agentProfileSchema.parse({}),
      reviewer: agentProfileSchema.parse({ mentionAliases: ['review', 'Rev'] }),
    };
    assert.deepEqual(profileAliases('qa', profiles.qa), ['qa']);
    assert.equal(profileForMentions(['switchboard', 'rev', 'qa'], profiles), 'reviewer');
    assert.equal(profileForMentions(['QA'], profiles), 'qa');
    assert.equal(profileForMentions(['switchboard'], profiles), null);
  });
});

describe('MentionResponder with a coding profile', { timeout: 60_000 }, () => {
  let fx: LinearGlueFixture;
  let manager: SessionManager;
  let runner: CodeRunner;

  beforeEach(async () => {
    const clock = new ManualClock();
    fx = await linearGlueFixture(
      {
        profiles: { reviewer: { answerWith: 'coding', instructions: 'Review the code read-only.', harness: 'claude' } },
      },
      clock,
      { 'harnesses.claude.executable': FAKE_CLAUDE, 'harnesses.claude.settingSources': ['project'] },
      (path) => openTestStore(path),
    );
    const work = join(fx.dir, 'repo');
    mkdirSync(work, { recursive: true });
    fx.full.linear.pipeline.repo = work;
    const logs = new SessionLogs(join(fx.dir, 'logs'), { fsyncBatchMs: 0, now: () => clock.now() });
    manager = new SessionManager({
      config: fx.full,
      clock,
      logger: silentLogger(),
      store: new CodingSessionStore(fx.db),
      logs,
      harnesses: {
        claude: createClaudeHarness({ config: fx.full.harnesses.claude, killGraceMs: 1_000 }),
        codex: new ScriptedHarness('codex', false),
        gemini: new ScriptedHarness('gemini', false),
      },
    });
    runner = new CodeRunner({ config: fx.full, sessions: manager, logs, clock, logger: silentLogger() });
  });
  afterEach(async () => {
    await manager.stop();
    await fx.close();
  });

  it('answers with one read-only coding turn in the team’s repository, as a reply in the thread', async () => {
    const responder = new MentionResponder({
      api: fx.api,
      config: fx.full,
      codeRunner: runner,
      logger: silentLogger(),
    });
    const result = await responder.answer(
      {
        issueId: FAKE_IDS.issue1,
        commentId: 'c1',
        threadId: 'c1',
        body: '@reviewer is the fix safe?',
        author: 'Ada',
        profile: 'reviewer',
      },
      new AbortController().signal,
    );
    assert.match(result.text, /^\*\*reviewer\*\*: FAKE CLAUDE REPLY to: Review the code read-only\./);
    const session = (await manager.list())[0];
    assert.equal(session?.spec.permissionMode, 'plan');
    assert.equal(session?.workdir, join(fx.dir, 'repo'));
    assert.match(session?.prompt ?? '', /Fix login redirect loop[\s\S]*by Ada\)\n@reviewer is the fix safe\?/);
    const reply = fx.appComments(FAKE_IDS.issue1).at(-1);
    assert.equal(reply?.parentId, 'c1');
  });
});
