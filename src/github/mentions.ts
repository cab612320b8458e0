// Which configured workspace holds a clone of a GitHub repository: the workspace itself or a folder right under it
// whose remote (`github.remote`) points at the repository.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { GitRunner } from './git.ts';
import { parseRepoName, repoFromRemoteUrl, repoName } from './remote.ts';

/**
 * The first of `workspaces` (or a folder directly under one) that is a clone of `repo` (`owner/name`, any case): its
 * `remote` names the repository, or (as for session_pr) `configured` (`github.repo`) does when set. Undefined when none.
 */
export async function workspaceOf(
  repo: string,
  options: { workspaces: readonly string[]; remote: string; configured: string | undefined; git: GitRunner },
): Promise<string | undefined> {
  const { workspaces, remote, configured, git } = options;
  const wanted = repo.toLowerCase();
  for (const workspace of workspaces) {
    const candidates = [workspace, ...children(workspace)];
    for (const dir of candidates) {
      const result = await git(dir, ['remote', 'get-url', remote]);
      if (result.code !== 0) continue;
      const found = configured ? parseRepoName(configured) : repoFromRemoteUrl(result.stdout.trim());
      if (found && repoName(found).toLowerCase() === wanted) return dir;
    }
  }
  return undefined;
}

function children(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isDirectory() && !e.name.startsWith('.'))
      .map((e) => join(dir, e.name))
      .sort();
  } catch {
    // A workspace that is missing or unreadable holds no clone; the workspace itself was asked already.
    return [];
  }
}
