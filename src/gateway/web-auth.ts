// Who may use the web page, its chat API, /rpc and the session event streams with the page's cookie instead of a bearer
// token. The rules:
// - Loopback mode (gateway.allowRemote off): only clients on a loopback socket whose Host header is a loopback name with
//   the port they connected to (stops DNS rebinding). Loading `/` there hands out the cookie without a login, unless
//   channels.web.requireLogin is set or the request came through a proxy (X-Forwarded-* / Forwarded / X-Real-IP).
// - Remote mode (gateway.allowRemote on) or requireLogin: the page asks for the gateway token once (a form POST, never a
//   URL) before it sets the cookie.
// - The cookie (HttpOnly, SameSite=Strict) carries the web token (web.token, mode 0600). A request using it must not
//   be cross-site by its Sec-Fetch-Site header, and a state-changing one must carry an Origin equal to its Host.
// Anyone who can open a connection to the loopback port is trusted like the machine's owner (any local process could
// also read the page); set channels.web.requireLogin to require the gateway token on a shared machine.
import { timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { Config } from '../core/config.ts';

/** The facts of a request the checks look at (so they are testable without HTTP). */
export interface RequestFacts {
  method: string;
  remoteAddress: string | undefined;
  /** The port the connection arrived on. */
  localPort: number | undefined;
  host: string | undefined;
  origin: string | undefined;
  fetchSite: string | undefined;
  fetchMode: string | undefined;
  cookie: string | undefined;
  /** The request carries a reverse proxy's forwarding headers. */
  forwarded: boolean;
}

export interface WebAuthOptions {
  /** The cookie's value (web.token). */
  webToken: string;
  /** The gateway token, asked for by the login form. */
  gatewayToken: string;
  /** `gateway.allowRemote`: clients from other machines may connect; everyone logs in. */
  allowRemote: boolean;
  /** `channels.web.requireLogin`: log in even from this machine. */
  requireLogin: boolean;
  cookieMaxAgeSeconds: number;
  secureCookie: boolean;
}

/** The outcome of a check: allowed, or refused with an HTTP status and a reason for the caller. */
export type Verdict = { ok: true } | { ok: false; status: 401 | 403; reason: string };

const OK: Verdict = { ok: true };
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
const FORWARDING_HEADERS = ['x-forwarded-for', 'x-forwarded-host', 'x-forwarded-proto', 'forwarded', 'x-real-ip'];

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** Collects the facts of a Fastify request. */
export function requestFacts(request: FastifyRequest): RequestFacts {
  const socket = request.raw.socket;
  return {
    method: request.method,
    remoteAddress: socket.remoteAddress,
    localPort: socket.localPort,
    host: header(request, 'host'),
    origin: header(request, 'origin'),
    fetchSite: header(request, 'sec-fetch-site'),
    fetchMode: header(request, 'sec-fetch-mode'),
    cookie: header(request, 'cookie'),
    forwarded: FORWARDING_HEADERS.some((name) => request.headers[name] !== undefined),
  };
}

/** True for a loopback socket address (IPv4 127/8, IPv6 ::1, IPv4-mapped 127/8). */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (!address) return false;
  const v4 = address.startsWith('::ffff:') ? address.slice(7) : address;
  return v4.startsWith('127.') || address === '::1';
}

/** True when a Host header names this machine's loopback (127.x.y.z, localhost, [::1]) with `port`. */
export function isLoopbackHost(host: string | undefined, port: number | undefined): boolean {
  if (!host || port === undefined) return false;
  const m = /^(\[::1\]|localhost|127(?:\.\d{1,3}){3})(?::(\d{1,5}))?$/.exec(host.toLowerCase());
  if (!m) return false;
  const given = m[2] === undefined ? 80 : Number(m[2]);
  return given === port;
}

/** True when `origin` (an Origin header) is the same host and port as `host` (the Host header). */
export function originMatchesHost(origin: string | undefined, host: string | undefined): boolean {
  if (!origin || !host || origin === 'null') return false;
  try {
    const url = new URL(origin);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.host === host.toLowerCase();
  } catch {
    return false;
  }
}

/** Compares two secrets in constant time (for equal lengths). */
export function secretsMatch(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The value of cookie `name` in a Cookie header, if present. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** The cookie's name for a gateway port (cookies ignore ports, so two daemons on one host do not collide). */
export function webCookieName(port: number | undefined): string {
  return `switchboard_web_${port ?? 0}`;
}

/** The checks of the web surface; one per gateway. */
export class WebAuth {
  #options: WebAuthOptions;

  constructor(options: WebAuthOptions) {
    this.#options = options;
  }

  /** True when the page must ask for the gateway token before it sets the cookie. */
  get loginRequired(): boolean {
    return this.#options.allowRemote || this.#options.requireLogin;
  }

  /** May this client reach the web surface at all (page, assets, login)? */
  reachable(f: RequestFacts): Verdict {
    if (this.#options.allowRemote) return OK;
    if (!isLoopbackAddress(f.remoteAddress))
      return {
        ok: false,
        status: 403,
        reason: 'the web page is served to this machine only (gateway.allowRemote is off)',
      };
    if (!isLoopbackHost(f.host, f.localPort)) {
      return {
        ok: false,
        status: 403,
        reason: `Host "${f.host ?? ''}" is not this machine's loopback address with port ${f.localPort ?? '?'}; open http://127.0.0.1:${f.localPort ?? ''}/`,
      };
    }
    return OK;
  }

  /** Is this request from a page of this gateway (same origin), judged by fetch metadata and, for writes, Origin? */
  #sameOrigin(f: RequestFacts): Verdict {
    if (f.fetchSite !== undefined && f.fetchSite !== 'same-origin' && f.fetchSite !== 'none') {
      return { ok: false, status: 403, reason: `cross-site request refused (Sec-Fetch-Site: ${f.fetchSite})` };
    }
    if (!SAFE_METHODS.has(f.method.toUpperCase()) && !originMatchesHost(f.origin, f.host)) {
      return { ok: false, status: 403, reason: 'a state-changing request needs an Origin header equal to its Host' };
    }
    return OK;
  }

  /** Does the request carry a valid web cookie, from a reachable client and a same-origin page? */
  authorize(f: RequestFacts): Verdict {
    const reach = this.reachable(f);
    if (!reach.ok) return reach;
    const given = cookieValue(f.cookie, webCookieName(f.localPort));
    if (given === undefined || !secretsMatch(given, this.#options.webToken)) {
      return {
        ok: false,
        status: 401,
        reason: 'not logged in: open the page again (or send Authorization: Bearer <gateway token>)',
      };
    }
    return this.#sameOrigin(f);
  }

  /** May loading the page hand out the cookie without a login? */
  mayAutoLogin(f: RequestFacts): boolean {
    if (this.loginRequired || f.forwarded || !this.reachable(f).ok) return false;
    return (
      f.fetchSite === undefined || f.fetchSite === 'same-origin' || f.fetchSite === 'none' || f.fetchMode === 'navigate'
    );
  }

  /** Checks a login form post: reachable, same origin, and the gateway token. */
  login(f: RequestFacts, token: string): Verdict {
    const reach = this.reachable(f);
    if (!reach.ok) return reach;
    const origin = this.#sameOrigin(f);
    if (!origin.ok) return origin;
    if (!secretsMatch(token.trim(), this.#options.gatewayToken))
      return { ok: false, status: 401, reason: 'that is not the gateway token' };
    return OK;
  }

  /** The Set-Cookie value that logs a browser in on the port the request came to. */
  setCookie(f: RequestFacts): string {
    const secure = this.#options.secureCookie ? '; Secure' : '';
    return `${webCookieName(f.localPort)}=${this.#options.webToken}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${this.#options.cookieMaxAgeSeconds}${secure}`;
  }

  /** The Set-Cookie value that logs a browser out. */
  clearCookie(f: RequestFacts): string {
    const secure = this.#options.secureCookie ? '; Secure' : '';
    return `${webCookieName(f.localPort)}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0${secure}`;
  }
}

/** Builds the web checks from the daemon's config, the gateway token and the web token (web.token). */
export function webAuthFor(config: Config, gatewayToken: string, webToken: string): WebAuth {
  return new WebAuth({
    webToken,
    gatewayToken,
    allowRemote: config.gateway.allowRemote,
    requireLogin: config.channels.web.requireLogin,
    cookieMaxAgeSeconds: config.channels.web.cookieMaxAgeHours * 3600,
    secureCookie: config.channels.web.secureCookie,
  });
}
