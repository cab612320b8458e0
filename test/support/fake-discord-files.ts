// Attachments for the fake Discord's REST routes, in the real wire format: a multipart/form-data body (parsed with
// Node's own `Response.formData()`) carries the JSON body as `payload_json` and each file as a `files[<n>]` part (its
// filename and bytes), as discord.js's REST client sends them; a file over the bot's upload limit is refused.

/** A file attached to a message: its name, type and bytes (and their UTF-8 text, for tests to compare). */
export interface FakeAttachment {
  id: string;
  filename: string;
  contentType: string;
  bytes: Buffer;
  content: string;
}

/** The upload limit of a bot in an unboosted guild, as the fake's interactions announce it (attachment_size_limit). */
export const FAKE_ATTACHMENT_LIMIT = 8_388_608;

/** A request body: its JSON (from the body itself or `payload_json`) and its files, or the error Discord answers. */
export type ReadBody =
  | { ok: true; body: Record<string, unknown>; files: FakeAttachment[] }
  | { ok: false; status: number; code: number; message: string };

/** Reads a REST request body: JSON, or multipart with `payload_json` and `files[n]` parts. */
export async function readRestBody(raw: Buffer, contentType: string): Promise<ReadBody> {
  const invalid: ReadBody = { ok: false, status: 400, code: 50109, message: 'The request body contains invalid JSON.' };
  if (!contentType.includes('multipart/form-data')) {
    try {
      return {
        ok: true,
        body: raw.length > 0 ? (JSON.parse(raw.toString('utf8')) as Record<string, unknown>) : {},
        files: [],
      };
    } catch {
      return invalid;
    }
  }
  const form = await new Response(new Uint8Array(raw), { headers: { 'content-type': contentType } }).formData();
  let body: Record<string, unknown> = {};
  const files: FakeAttachment[] = [];
  for (const [name, value] of form) {
    if (typeof value === 'string') {
      if (name !== 'payload_json') continue;
      try {
        body = JSON.parse(value) as Record<string, unknown>;
      } catch {
        return invalid;
      }
      continue;
    }
    const index = /^files\[(\d+)\]$/.exec(name)?.[1];
    if (index === undefined) return { ok: false, status: 400, code: 50035, message: `Invalid Form Body (${name})` };
    const bytes = Buffer.from(await value.arrayBuffer());
    if (bytes.length > FAKE_ATTACHMENT_LIMIT)
      return { ok: false, status: 413, code: 40005, message: 'Request entity too large' };
    files.push({ id: index, filename: value.name, contentType: value.type, bytes, content: bytes.toString('utf8') });
  }
  return { ok: true, body, files };
}

/** The `attachments` of a message object for its files. */
export function attachmentObjects(files: readonly FakeAttachment[] | undefined): Record<string, unknown>[] {
  return (files ?? []).map((f) => ({
    id: f.id,
    filename: f.filename,
    size: f.bytes.length,
    url: `https://cdn.fake.discord/attachments/${f.id}/${encodeURIComponent(f.filename)}`,
    proxy_url: `https://media.fake.discord/attachments/${f.id}/${encodeURIComponent(f.filename)}`,
    ...(f.contentType ? { content_type: f.contentType } : {}),
  }));
}
