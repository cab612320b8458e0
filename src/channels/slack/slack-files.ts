// A file shared in a Slack conversation through the WebClient's files.uploadV2: files.getUploadURLExternal (name and
// length), the upload of the bytes to the URL Slack answered, files.completeUploadExternal (`channel_id`, `thread_ts`,
// the comment). Failures of any step are classified for the outbox like those of chat.postMessage.
import type { webApi } from '@slack/bolt';
import type { OutboundFile } from '../connector.ts';
import { DeliveryError } from '../delivery-error.ts';
import { platformError, toDeliveryError } from './slack-errors.ts';

/** Where and how a file is shared. */
export interface FileShare {
  /** The conversation id (`C…`, `D…`). */
  channel: string;
  /** The ts of the thread's parent, when the file goes in a thread. */
  thread: string | undefined;
  /** The message shown with the file (mrkdwn), if any. */
  comment: string | undefined;
  file: OutboundFile;
}

/**
 * Uploads and shares `share.file`; resolves once Slack completed the upload, throws a DeliveryError otherwise (a
 * permanent one naming the `files:write` scope when the app lacks it).
 */
export async function shareFile(web: InstanceType<typeof webApi.WebClient>, share: FileShare): Promise<void> {
  const upload = {
    file: Buffer.from(share.file.content, 'utf8'),
    filename: share.file.name,
    title: share.file.name,
    ...(share.comment ? { initial_comment: share.comment } : {}),
  };
  try {
    await web.filesUploadV2(
      share.thread
        ? { ...upload, channel_id: share.channel, thread_ts: share.thread }
        : { ...upload, channel_id: share.channel },
    );
  } catch (error) {
    if (platformError(error) === 'missing_scope') {
      throw new DeliveryError('Slack refused the file: the app needs the files:write scope (reinstall it with it)', {
        kind: 'permanent',
        cause: error,
      });
    }
    throw toDeliveryError(error);
  }
}
