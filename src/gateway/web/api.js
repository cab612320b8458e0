// Calls to the daemon. The page's cookie authenticates them; nothing here ever sees a token.

/** An error the daemon answered (or a network failure, status 0). */
export class ApiError extends Error {
  constructor(message, status) {
    super(message);
    this.status = status;
  }
}

let rpcId = 0;

async function readError(res) {
  try {
    const body = await res.json();
    if (body && typeof body.error === 'string') return body.error;
    if (body && body.error && typeof body.error.message === 'string') return body.error.message;
  } catch {
    // not JSON: fall through to the status line
  }
  return `${res.status} ${res.statusText}`;
}

async function call(path, init) {
  let res;
  try {
    res = await fetch(path, { credentials: 'same-origin', ...init });
  } catch (error) {
    throw new ApiError(`the daemon is not reachable (${error instanceof Error ? error.message : String(error)})`, 0);
  }
  if (res.status === 401) throw new ApiError('not logged in any more: reload the page', 401);
  return res;
}

/** Calls a JSON-RPC method of the gateway (sessions.list, sessions.send, …) and returns its result. */
export async function rpc(method, params = {}) {
  rpcId += 1;
  const res = await call('/rpc', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: rpcId, method, params }),
  });
  let body;
  try {
    body = await res.json();
  } catch {
    throw new ApiError(`${res.status} ${res.statusText}`, res.status);
  }
  if (body.error) throw new ApiError(body.error.message, res.status);
  return body.result;
}

/**
 * Sends a chat message (`pressed`: the text is the command of a button the person pressed); resolves with
 * `{ duplicate, message }` once the daemon has accepted it (HTTP 202).
 */
export async function postChatMessage(chatId, id, text, pressed = false) {
  const res = await call(`/web/api/chats/${encodeURIComponent(chatId)}/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(pressed ? { id, text, pressed: true } : { id, text }),
  });
  if (res.status !== 202) throw new ApiError(await readError(res), res.status);
  return res.json();
}

/** The page's settings: version, limits, refresh interval, chat commands. */
export async function getInfo() {
  const res = await call('/web/api/info', {});
  if (!res.ok) throw new ApiError(await readError(res), res.status);
  return res.json();
}
