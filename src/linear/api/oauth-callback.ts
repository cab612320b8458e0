// The OAuth callback as a function of its query: validates it, completes the installation, and renders the small page
// the browser shows. Shared by the gateway route and the one-shot listener of `switchboard linear connect`.
import { z } from 'zod';
import { AppError, errorMessage, formatZodError } from '../../core/errors.ts';
import type { Logger } from '../../core/logger.ts';
import type { LinearOAuth } from './oauth.ts';
import { LinearApiError } from './types.ts';

const callbackQuerySchema = z.object({
  code: z.string().min(1).max(2048).optional(),
  state: z.string().min(1).max(512).optional(),
  error: z.string().max(200).optional(),
  error_description: z.string().max(2000).optional(),
});

export interface CallbackPage {
  status: number;
  html: string;
}

function escapeHtml(text: string): string {
  return text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string,
  );
}

function page(status: number, title: string, message: string): CallbackPage {
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>switchboard · ${escapeHtml(title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem;color:#222}h1{font-size:1.4rem}</style></head>
<body><h1>${escapeHtml(title)}</h1><p>${escapeHtml(message)}</p></body></html>`;
  return { status, html };
}

/**
 * Completes the OAuth installation from the callback's query string. Returns the page to show: 200 when connected,
 * 400 for a malformed query, 403 for a refused state or a denied authorization, 502 when Linear refused the code or
 * could not be reached. Never throws; failures are logged without secrets.
 */
export async function handleOAuthCallback(
  oauth: LinearOAuth,
  rawQuery: unknown,
  logger: Logger,
): Promise<CallbackPage> {
  const parsed = callbackQuerySchema.safeParse(rawQuery ?? {});
  if (!parsed.success) return page(400, 'Linear connection failed', formatZodError(parsed.error));
  try {
    const tokens = await oauth.completeCallback(parsed.data);
    const who = tokens.organizationName ? ` to the ${tokens.organizationName} workspace` : '';
    return page(
      200,
      'Linear connected',
      `switchboard is connected${who}${tokens.appUserName ? ` as ${tokens.appUserName}` : ''}. You can close this tab.`,
    );
  } catch (error) {
    logger.warn({ err: errorMessage(error) }, 'linear oauth callback refused');
    if (error instanceof AppError)
      return page(error.kind === 'forbidden' ? 403 : 400, 'Linear connection failed', error.message);
    if (error instanceof LinearApiError) return page(502, 'Linear connection failed', error.message);
    return page(500, 'Linear connection failed', errorMessage(error));
  }
}
