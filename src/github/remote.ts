// Which GitHub repository a git remote is: `owner/name` from its URL (https, http, ssh and scp-like forms), and the
// branch name switchboard gives a session's work.

/** A GitHub repository. */
export interface RepoRef {
  owner: string;
  repo: string;
}

const NAME = /^[A-Za-z0-9_.-]+$/;

function fromPath(path: string): RepoRef | undefined {
  const parts = path
    .replace(/^\/+/, '')
    .replace(/\/+$/, '')
    .replace(/\.git$/, '')
    .split('/');
  if (parts.length < 2) return undefined;
  // GitHub Enterprise may serve under a path prefix: the repository is the last two segments.
  const owner = parts[parts.length - 2] ?? '';
  const repo = parts[parts.length - 1] ?? '';
  return NAME.test(owner) && NAME.test(repo) && repo !== '.git' ? { owner, repo } : undefined;
}

/**
 * The repository a remote URL names: `https://github.com/o/r(.git)`, `ssh://git@github.com/o/r.git`,
 * `git@github.com:o/r.git`. Undefined for a local path or `file://` URL, or anything without two path segments.
 */
export function repoFromRemoteUrl(url: string): RepoRef | undefined {
  const trimmed = url.trim();
  const scp = /^[^/@:\s]+@[^/:\s]+:(?!\/)(.+)$/.exec(trimmed);
  if (scp?.[1]) return fromPath(scp[1]);
  let parsed: URL;
  try {
    parsed = new URL(trimmed);
  } catch {
    return undefined;
  }
  if (!['https:', 'http:', 'ssh:', 'git:'].includes(parsed.protocol)) return undefined;
  return fromPath(decodeURIComponent(parsed.pathname));
}

/** `owner/name` parsed (the `github.repo` form). */
export function parseRepoName(value: string): RepoRef | undefined {
  const [owner, repo, extra] = value.split('/');
  return owner && repo && extra === undefined && NAME.test(owner) && NAME.test(repo) ? { owner, repo } : undefined;
}

/** `owner/name`. */
export function repoName(ref: RepoRef): string {
  return `${ref.owner}/${ref.repo}`;
}

/**
 * The branch a session's work goes on when its workdir is on the base branch (or detached):
 * `switchboard/<session-name>`, the name reduced to what git accepts in a ref (no spaces, `..`, `~^:?*[\`, `@{`, no
 * trailing `.lock` or dot).
 */
export function sessionBranch(sessionName: string): string {
  const cleaned = sessionName
    .normalize('NFKD')
    .replace(/[^A-Za-z0-9._/-]+/g, '-')
    .replace(/\.{2,}/g, '.')
    .replace(/\/{2,}/g, '/')
    .split('/')
    .map((part) =>
      part
        .replace(/^[.-]+/, '')
        .replace(/\.lock$/i, '')
        .replace(/[.-]+$/, ''),
    )
    .filter((part) => part.length > 0)
    .join('-')
    .replace(/-{2,}/g, '-')
    .slice(0, 100)
    .replace(/[.-]+$/, '');
  return `switchboard/${cleaned.length > 0 ? cleaned : 'session'}`;
}
