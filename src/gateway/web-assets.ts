import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** One file of the web page, held in memory. */
export interface WebAsset {
  contentType: string;
  body: Buffer;
}

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.svg': 'image/svg+xml',
};

/** The directory holding the page's files (src/gateway/web/). */
export const WEB_ASSET_DIR = fileURLToPath(new URL('./web/', import.meta.url));

/**
 * Files of installed packages the page serves under its own asset names (no CDN): diff2html's browser bundle (it sets
 * `window.Diff2Html`) and its stylesheet, for the Changes view.
 */
export const VENDOR_ASSETS: Record<string, string> = {
  'diff2html.js': 'diff2html/bundles/js/diff2html.min.js',
  'diff2html.css': 'diff2html/bundles/css/diff2html.min.css',
};

/**
 * Reads every page file (html, css, js, svg) of `dir` and the VENDOR_ASSETS once, at startup. Returns them by file
 * name; only these names are ever served, so no request path reaches the file system.
 */
export function loadWebAssets(dir: string = WEB_ASSET_DIR): Map<string, WebAsset> {
  const assets = new Map<string, WebAsset>();
  for (const name of readdirSync(dir)) {
    const contentType = CONTENT_TYPES[extname(name)];
    if (!contentType || !/^[a-z0-9-]+\.[a-z]+$/.test(name)) continue;
    assets.set(name, { contentType, body: readFileSync(join(dir, name)) });
  }
  const require = createRequire(import.meta.url);
  for (const [name, specifier] of Object.entries(VENDOR_ASSETS)) {
    const contentType = CONTENT_TYPES[extname(name)] as string;
    assets.set(name, { contentType, body: readFileSync(require.resolve(specifier)) });
  }
  for (const required of ['index.html', 'login.html', 'app.js', 'app.css']) {
    if (!assets.has(required)) throw new Error(`web page file ${required} is missing from ${dir}`);
  }
  return assets;
}

/** Security headers of every page response: a strict CSP (own scripts and styles only), no framing, no sniffing. */
export const PAGE_HEADERS: Record<string, string> = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  // same-origin, not no-referrer: with no-referrer, Chromium sends `Origin: null` on the login form's POST.
  'referrer-policy': 'same-origin',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
};
