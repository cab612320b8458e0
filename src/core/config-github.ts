// Config section of the GitHub integration (`github`): pull requests from sessions and Linear dispatches, and the
// webhook that brings reviews and mentions back.
import { z } from 'zod';

/** `github`: how switchboard reaches GitHub (a token, or a GitHub App) and which repository a session's remote is. */
export const githubSchema = z.strictObject({
  enabled: z.boolean().default(false),
  /** A personal access token itself; prefer `tokenEnv`. */
  token: z.string().min(1).optional(),
  tokenEnv: z.string().min(1).default('GITHUB_TOKEN'),
  /** A GitHub App instead of a token: installation tokens are minted from its private key and refreshed before expiry. */
  app: z
    .strictObject({
      appId: z.union([z.string().min(1), z.number().int().positive()]),
      privateKeyEnv: z.string().min(1).default('GITHUB_APP_PRIVATE_KEY'),
      installationId: z.union([z.string().min(1), z.number().int().positive()]),
    })
    .optional(),
  /** The REST API base (GitHub Enterprise: https://<host>/api/v3; tests point it at a fake). */
  apiUrl: z.url().default('https://api.github.com'),
  /** The secret webhooks are signed with (X-Hub-Signature-256); prefer `webhookSecretEnv`. */
  webhookSecret: z.string().min(1).optional(),
  webhookSecretEnv: z.string().min(1).default('GITHUB_WEBHOOK_SECRET'),
  /** The git remote branches are pushed to. */
  remote: z.string().min(1).default('origin'),
  /** `owner/name`, when the remote's URL does not say it. */
  repo: z
    .string()
    .regex(/^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/, 'owner/name')
    .optional(),
  /** Open pull requests as drafts. */
  draft: z.boolean().default(false),
  /** The name people mention in issue and PR comments to reach switchboard (`@switchboard fix this`). */
  mentionName: z.string().min(1).default('switchboard'),
  /**
   * GitHub logins whose reviews, review comments and mentions switchboard acts on (any case). Empty: anyone GitHub
   * lets review or comment on the repository (bots never).
   */
  allowedUsers: z.array(z.string().min(1)).default([]),
});

/** The parsed `github` section. */
export type GithubConfig = z.infer<typeof githubSchema>;
