// Approvals on the real daemon (in this process) with the fake Claude CLI asking for its tool: in Telegram (fake Bot API)
// the request comes with an inline keyboard, a press decides it, the message is edited to say how and by whom, a second
// press is told it was already decided and a stranger's press is refused; from the CLI the same requests are listed,
// approved for the session, denied with a reason, and the rules listed.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Approval, ApprovalRule } from '../../src/approvals/approval.ts';
import type { Daemon } from '../../src/main.ts';
import { startDaemon } from '../../src/main.ts';
import { switchboard } from '../support/cli.ts';
import { telegramSection, textsTo } from '../support/e2e-daemon.ts';
import type { FakeTelegram } from '../support/fake-telegram.ts';
import { startFakeTelegram } from '../support/fake-telegram.ts';
import { tempDir } from '../support/temp-dir.ts';
import { waitFor } from '../support/wait-for.ts';

const FAKE_CLAUDE = fileURLToPath(new URL('../support/fake-claude.mjs', import.meta.url));
const USER = 4242;
const STRANGER = 777;

describe('approvals from Telegram buttons and the CLI', { timeout: 120_000 }, () => {
  const dir = tempDir('sb-e2e-approvals-');
  const home = join(dir.path, 'home');
  const workdir = join(dir.path, 'work');
  const env = { SWITCHBOARD_HOME: home };
  let telegram: FakeTelegram;
  let daemon: Daemon;

  before(async () => {
    mkdirSync(workdir, { recursive: true });
    telegram = await startFakeTelegram();
    daemon = await startDaemon({
      home,
      env: {},
      overrides: {
        'gateway.port': 0,
        'log.level': 'silent',
        workspaces: [dir.path],
        permissionMode: 'default',
        'harnesses.claude.executable': FAKE_CLAUDE,
        'channels.telegram': telegramSection(telegram, [USER]),
      },
    });
  });

  after(async () => {
    await daemon?.stop();
    await telegram?.close();
    dir.remove();
  });

  const cliJson = async <T>(args: string[]): Promise<T> => {
    const r = await switchboard([...args, '--json'], env);
    assert.equal(r.code, 0, r.stderr);
    return JSON.parse(r.stdout) as T;
  };
  const pendingApproval = (): Promise<Approval> =>
    waitFor('a pending approval', async () =>
      (await cliJson<{ approvals: Approval[] }>(['approvals', '--status', 'pending'])).approvals.at(0),
    );

  it('a press decides; the message is edited; a second press and a stranger are refused', async () => {
    telegram.pushMessage({ fromId: USER, text: `/claude --workdir ${workdir} [[tool]]` });
    const approval = await pendingApproval();
    assert.equal(approval.tool, 'Bash');
    const request = await waitFor('the request with its keyboard', () =>
      telegram.sent.find((m) => m.chatId === String(USER) && m.keyboard !== undefined),
    );
    assert.match(request.text, new RegExp(`^🔐 \\[${approval.session}\\] wants to run Bash: echo hello-from-tool`));
    assert.deepEqual(
      request.keyboard?.flat().map((b) => b.text),
      ['Allow', 'Allow for session', 'Always', 'Deny'],
    );

    const stranger = telegram.press(USER, STRANGER, request.messageId, `/approve ${approval.id}`);
    await waitFor('the stranger to be answered', () =>
      telegram.callbackAnswers.find((a) => a.queryId === stranger.queryId),
    );
    assert.match(telegram.callbackAnswers.at(-1)?.text ?? '', /not allowed/i);

    const press = telegram.press(USER, USER, request.messageId, `/approve ${approval.id} session`);
    await waitFor('the press to be answered', () => telegram.callbackAnswers.find((a) => a.queryId === press.queryId));
    const edited = await waitFor('the message to be edited', () =>
      telegram.edits.find((e) => e.messageId === request.messageId),
    );
    assert.equal(
      edited.text,
      `✅ [${approval.session}] Bash: echo hello-from-tool\n   allowed for this session by telegram|${USER}`,
    );
    assert.equal(edited.keyboard, undefined);

    telegram.press(USER, USER, request.messageId, `/deny ${approval.id}`);
    await waitFor('the second press to be told', () =>
      textsTo(telegram, USER).some((t) => t.includes(`Approval ${approval.id} was already decided`)),
    );
    const [decided] = (await cliJson<{ approvals: Approval[] }>(['approvals', '--session', approval.session]))
      .approvals;
    assert.equal(decided?.status, 'allowed');
    assert.equal(decided?.decidedBy, `telegram|${USER}`);
  });

  it('the CLI lists, approves always, denies with a reason, and lists the rules', async () => {
    const launched = await cliJson<{ id: string }>(['launch', '[[tool]]', '--workdir', workdir]);
    const first = await pendingApproval();
    assert.equal(first.sessionId, launched.id);
    const listed = await switchboard(['approvals'], env);
    assert.match(listed.stdout, new RegExp(`🔐 ${first.id} \\[.+\\] Bash: echo hello-from-tool — pending`));
    const approved = await switchboard(['approve', first.id, '--always'], env);
    assert.equal(approved.code, 0, approved.stderr);
    assert.match(approved.stdout, /allowed always \(rule stored\) by cli/);
    const rules = await cliJson<{ rules: ApprovalRule[] }>(['approvals', 'rules']);
    assert.deepEqual(
      rules.rules.map((r) => [r.rule, r.root, r.source]),
      [['Bash(echo:*)', dir.path, 'cli']],
    );
    const removed = await switchboard(['approvals', 'rule-remove', rules.rules[0]?.id ?? ''], env);
    assert.equal(removed.code, 0, removed.stderr);

    await cliJson(['launch', '[[tool]]', '--workdir', workdir]);
    const second = await pendingApproval();
    const denied = await switchboard(['deny', second.id, 'not', 'today'], env);
    assert.equal(denied.code, 0, denied.stderr);
    assert.match(denied.stdout, /denied by cli: not today/);
    const unknown = await switchboard(['approve', 'zzzzz'], env);
    assert.notEqual(unknown.code, 0);
    assert.match(unknown.stderr, /no such approval/);
  });
});
