// The set-up of the GitHub crash tests: a crash rig (real daemon processes) whose daemon has the fake Claude CLI as
// its agent and GitHub on the fake GitHub, over a repository `work` whose origin is the bare `remote`.
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CrashRig } from './crash-rig.ts';
import { withCrashRig } from './crash-rig.ts';
import type { FakeGithub } from './fake-github.ts';
import { startFakeGithub } from './fake-github.ts';
import { addBareOrigin, initRepo } from './git-repo.ts';
import { chatText } from './mock-openai-chat.ts';
import { waitFor } from './wait-for.ts';

const FAKE_CLAUDE = fileURLToPath(new URL('./fake-claude.mjs', import.meta.url));

/** The webhook secret the rig's daemon verifies GitHub deliveries with. */
export const GITHUB_CRASH_SECRET = 'github-webhook-secret';

/** What a GitHub crash test works with. */
export interface GithubCrashRig {
  rig: CrashRig;
  github: FakeGithub;
  /** The repository sessions run in, and its bare origin. */
  work: string;
  remote: string;
  /** The environment every start of the daemon needs (the GitHub token). */
  env: Record<string, string>;
}

/**
 * Runs `body` with the rig configured (not started: start it with `env` and the fault to arm), then stops everything;
 * `prefix` names the temp directory.
 */
export async function withGithubCrashRig(prefix: string, body: (t: GithubCrashRig) => Promise<void>): Promise<void> {
  const github = await startFakeGithub();
  try {
    await withCrashRig(
      prefix,
      () => chatText('unused'),
      {},
      async (rig) => {
        const remote = join(rig.root, 'remote.git');
        const work = initRepo(join(rig.root, 'work'));
        addBareOrigin(work, remote);
        rig.configure({
          harnesses: { claude: { executable: FAKE_CLAUDE } },
          github: { enabled: true, apiUrl: github.url, repo: 'acme/widgets', webhookSecret: GITHUB_CRASH_SECRET },
        });
        await body({ rig, github, work, remote, env: { GITHUB_TOKEN: 'ghp_crash_test_token' } });
      },
    );
  } finally {
    await github.close();
  }
}

/** Waits (up to `timeoutMs`) until session `name` of the rig's daemon has ended its turn (or ended). */
export async function turnEnded(rig: CrashRig, name: string, timeoutMs: number): Promise<void> {
  await waitFor(
    `${name} to end its turn`,
    async () => {
      const s = await rig.daemon.rpc<{ status: string; waitingFor: string | null }>('sessions.get', { session: name });
      return s.waitingFor === 'turn-end' || s.status === 'completed';
    },
    timeoutMs,
  );
}
