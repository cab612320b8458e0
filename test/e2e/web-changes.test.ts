// The session view's Changes tab in headless Chromium (Debian's /usr/bin/chromium through playwright-core), over the
// daemon's real web path (test/support/web-gateway.ts): a session launched in a git repository whose workdir then gets
// a commit, an uncommitted edit, a new file, a deletion and a file whose name is HTML shows every file with its +/-
// counts and the patch rendered by diff2html (served by the daemon), side by side and unified; names stay text.
import assert from 'node:assert/strict';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import type { Session } from '../../src/coding/session.ts';
import { chromiumSkip, launchChromium, openWebPage } from '../support/chromium.ts';
import { commitFile, gitSync, initRepo } from '../support/git-repo.ts';
import type { WebGatewayFixture } from '../support/web-gateway.ts';
import { webGateway } from '../support/web-gateway.ts';

const skip = chromiumSkip(existsSync);
/** A file name that is HTML: it must show as these characters, never as an element. */
const HOSTILE = '"><img src=x id=pwned onerror=document.title=1>.md';

describe('the Changes view in headless Chromium', { skip }, () => {
  let g: WebGatewayFixture;
  let browser: Browser;
  let page: Page;
  let session: Session;
  let repo: string;
  const problems: string[] = [];

  before(async () => {
    g = await webGateway();
    repo = initRepo(join(g.manager.workdir, 'repo'));
    commitFile(repo, 'gone.txt', 'bye\n');
    session = await g.manager.manager.launch({ prompt: 'change the repo', workdir: repo, originChannel: 'cli' });
    await g.manager.harness.last.emit({ type: 'started', backendSessionId: 'b-changes' });
    commitFile(repo, 'committed.ts', 'export const a = 1;\nexport const b = 2;\n');
    writeFileSync(join(repo, 'README.md'), '# test repo\nwith a second line\n');
    writeFileSync(join(repo, 'fresh.ts'), 'export const fresh = true;\n');
    writeFileSync(join(repo, HOSTILE), 'hello\n');
    rmSync(join(repo, 'gone.txt'));
    assert.match(gitSync(repo, 'status', '--porcelain'), /\?\? fresh\.ts/);
    browser = await launchChromium();
    page = await openWebPage(
      browser,
      `http://127.0.0.1:${g.port}/#session=${encodeURIComponent(session.id)}`,
      problems,
    );
    await page.locator('#detail-name', { hasText: session.name }).waitFor();
  });

  after(async () => {
    await browser?.close();
    await g?.close();
  });

  it('lists the changed files with their counts and renders the diff side by side, then unified', async () => {
    await page.click('#detail-tab-changes');
    await page.locator('#changes-summary', { hasText: '5 files changed, +5 -1' }).waitFor();
    assert.equal(await page.locator('#session-log').isHidden(), true);
    const rows = await page
      .locator('#changes-files .changes-file')
      .evaluateAll((items) =>
        items.map((item) => [
          item.getAttribute('data-status'),
          item.querySelector('.path')?.textContent,
          item.querySelector('.plus')?.textContent,
          item.querySelector('.minus')?.textContent,
        ]),
      );
    assert.deepEqual(
      rows.sort((a, b) => String(a[1]).localeCompare(String(b[1]))),
      [
        ['added', HOSTILE, '+1', '-0'],
        ['modified', 'README.md', '+1', '-0'],
        ['added', 'committed.ts', '+2', '-0'],
        ['added', 'fresh.ts', '+1', '-0'],
        ['deleted', 'gone.txt', '+0', '-1'],
      ].sort((a, b) => String(a[1]).localeCompare(String(b[1]))),
    );

    // diff2html renders the patch: one file block each, side by side (two columns) by default on a wide screen.
    await page.locator('#changes-diff .d2h-file-wrapper').nth(4).waitFor();
    assert.equal(await page.locator('#changes-diff .d2h-file-wrapper').count(), 5);
    assert.equal(await page.locator('#changes-diff .d2h-files-diff').count(), 5);
    assert.equal(await page.locator('#changes-format').getAttribute('aria-pressed'), 'true');
    await page.locator('#changes-diff .d2h-ins', { hasText: 'export const fresh = true;' }).first().waitFor();
    await page.locator('#changes-diff .d2h-del', { hasText: 'bye' }).first().waitFor();

    await page.click('#changes-format');
    await page.locator('#changes-format', { hasText: 'Unified' }).waitFor();
    await page.locator('#changes-diff .d2h-file-diff').nth(4).waitFor();
    assert.equal(await page.locator('#changes-diff .d2h-files-diff').count(), 0);
    await page.locator('#changes-diff .d2h-ins', { hasText: 'with a second line' }).first().waitFor();

    // The HTML file name is text everywhere: in the list and in diff2html's file header.
    assert.equal(await page.locator('#pwned').count(), 0);
    assert.equal(await page.locator('#session-changes img').count(), 0);
    assert.ok(await page.locator('#changes-diff .d2h-file-name', { hasText: HOSTILE }).count());
    assert.notEqual(await page.title(), '1');

    const sources = await page
      .locator('script[src]')
      .evaluateAll((items) => items.map((item) => item.getAttribute('src')));
    assert.ok(sources.includes('/web/assets/diff2html.js'), `diff2html from the daemon: ${sources.join(', ')}`);

    await page.click('#detail-tab-log');
    assert.equal(await page.locator('#session-changes').isHidden(), true);
    assert.equal(await page.locator('#session-log').isVisible(), true);
  });

  it('refreshes on demand, and says so when a session works outside git', async () => {
    await page.click('#detail-tab-changes');
    await page.locator('#changes-summary', { hasText: '5 files changed' }).waitFor();
    writeFileSync(join(repo, 'later.txt'), 'one more\n');
    await page.click('#changes-refresh');
    await page.locator('#changes-summary', { hasText: '6 files changed, +6 -1' }).waitFor();
    await page.locator('#changes-files .changes-file[data-path="later.txt"]').waitFor();

    const plain = await g.manager.manager.launch({
      prompt: 'outside git',
      name: 'plain',
      workdir: g.manager.workdir,
      originChannel: 'cli',
    });
    await page.reload();
    await page.locator('.session-row', { hasText: plain.name }).click();
    await page.locator('#detail-name', { hasText: plain.name }).waitFor();
    assert.equal(await page.locator('#session-changes').isHidden(), true, 'a newly selected session shows its output');
    await page.click('#detail-tab-changes');
    await page.locator('#changes-summary', { hasText: 'is not in a git repository' }).waitFor();
    assert.equal(await page.locator('#changes-files .changes-file').count(), 0);
  });

  it('raised no page errors, console errors or CSP violations', async () => {
    assert.deepEqual(problems, []);
  });
});
