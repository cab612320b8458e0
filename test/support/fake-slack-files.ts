// Slack's external file upload flow for the fake Slack, in the real wire format: files.getUploadURLExternal (filename,
// length) hands out an upload URL on the fake itself, the file's bytes are POSTed there (raw, or as multipart/form-data
// as @slack/web-api sends them; parsed with Node's own `Response.formData()`), and files.completeUploadExternal shares
// the uploaded files in `channel_id` (in the thread `thread_ts`) with the `initial_comment`. Tests read the shared files.

/** A file shared in a channel: its name, title, bytes (and their UTF-8 text), where, and the comment that came with it. */
export interface FakeSlackFile {
  id: string;
  name: string;
  title: string;
  bytes: Buffer;
  content: string;
  channel: string;
  threadTs: string | undefined;
  initialComment: string | undefined;
}

interface Upload {
  name: string;
  length: number;
  bytes: Buffer | undefined;
}

type Params = Record<string, unknown>;

/** The uploads in flight and the files shared. */
export class FakeSlackFiles {
  /** Files shared by files.completeUploadExternal, in order. */
  readonly shared: FakeSlackFile[] = [];
  /** Upload POSTs received (file id and byte count), in order. */
  readonly uploads: { fileId: string; length: number }[] = [];
  #uploads = new Map<string, Upload>();
  #seq = 0;

  /** files.getUploadURLExternal: a file id and the URL (under `baseUrl`) to POST its bytes to. */
  uploadUrl(params: Params, baseUrl: string): Params {
    const name = String(params.filename ?? '');
    const length = Number(params.length);
    if (!name || !Number.isInteger(length) || length <= 0) return { ok: false, error: 'invalid_arguments' };
    this.#seq += 1;
    const fileId = `F${String(this.#seq).padStart(8, '0')}`;
    this.#uploads.set(fileId, { name, length, bytes: undefined });
    return { ok: true, upload_url: `${baseUrl}/upload/${fileId}`, file_id: fileId };
  }

  /** The POST of a file's bytes to its upload URL: a status and body as Slack's upload endpoint answers. */
  async receive(fileId: string, body: Buffer, contentType: string): Promise<{ status: number; body: string }> {
    const upload = this.#uploads.get(fileId);
    if (!upload) return { status: 404, body: 'not found' };
    let bytes = body;
    if (contentType.includes('multipart/form-data')) {
      const form = await new Response(new Uint8Array(body), { headers: { 'content-type': contentType } }).formData();
      const file = [...form.values()].find((value) => typeof value !== 'string');
      if (!file) return { status: 400, body: 'no file in the form' };
      bytes = Buffer.from(await file.arrayBuffer());
    }
    if (bytes.length !== upload.length) return { status: 400, body: `expected ${upload.length} bytes` };
    upload.bytes = bytes;
    this.uploads.push({ fileId, length: bytes.length });
    return { status: 200, body: `OK - ${bytes.length}` };
  }

  /** files.completeUploadExternal: shares the uploaded files in the channel (and thread), with the comment. */
  complete(params: Params): Params {
    let files: { id?: unknown; title?: unknown }[];
    try {
      const parsed = typeof params.files === 'string' ? (JSON.parse(params.files) as unknown) : params.files;
      if (!Array.isArray(parsed) || parsed.length === 0) return { ok: false, error: 'invalid_arguments' };
      files = parsed as { id?: unknown; title?: unknown }[];
    } catch {
      return { ok: false, error: 'invalid_arguments' };
    }
    const channel = params.channel_id === undefined ? '' : String(params.channel_id);
    if (!channel) return { ok: false, error: 'invalid_arguments' };
    const uploads = files.map((f) => ({
      id: String(f.id ?? ''),
      title: f.title,
      upload: this.#uploads.get(String(f.id)),
    }));
    if (uploads.some((u) => u.upload?.bytes === undefined)) return { ok: false, error: 'file_upload_not_completed' };
    const threadTs = params.thread_ts === undefined ? undefined : String(params.thread_ts);
    const comment = params.initial_comment === undefined ? undefined : String(params.initial_comment);
    const answer: Params[] = [];
    for (const { id, title, upload } of uploads) {
      if (!upload?.bytes) continue;
      this.#uploads.delete(id);
      const shown = typeof title === 'string' && title !== '' ? title : upload.name;
      this.shared.push({
        id,
        name: upload.name,
        title: shown,
        bytes: upload.bytes,
        content: upload.bytes.toString('utf8'),
        channel,
        threadTs,
        initialComment: comment,
      });
      answer.push({ id, name: upload.name, title: shown, size: upload.bytes.length });
    }
    return { ok: true, files: answer };
  }
}
