// Shared pieces of the Discord end-to-end tests: the config section that points the daemon at a fake Discord, and
// what the bot posted, for a failed test to print.
import type { FakeDiscord } from './fake-discord.ts';

/** `channels.discord` for a bot served by `fake` in its guild, answering only `allowedUserIds`. */
export function discordSection(fake: FakeDiscord, allowedUserIds: string[]): Record<string, unknown> {
  return {
    enabled: true,
    token: fake.token,
    applicationId: fake.applicationId,
    guildIds: [fake.guildId],
    allowedUserIds,
    apiUrl: fake.url,
  };
}

/** What the bot posted, one line per message (channel, thread or DM), for a failed test to print. */
export function discordTranscript(fake: FakeDiscord): string {
  return fake.sent.map((m) => `  → ${m.channelId}: ${JSON.stringify(m.content)}`).join('\n') || '  (none)';
}
