import { isInside } from '../coding/workspace.ts';
import type { Config } from '../core/config.ts';

/**
 * Resolves the channel a session reports back to, in the seed's order: the explicit value, the caller's channel,
 * `agentChannels[workdir]` (longest matching prefix), `fallbackChannel`, then "unknown".
 */
export function resolveOriginChannel(
  config: Pick<Config, 'agentChannels' | 'fallbackChannel'>,
  options: { explicit?: string; callerChannel?: string; workdir?: string },
): string {
  if (options.explicit?.trim()) return options.explicit.trim();
  if (options.callerChannel) return options.callerChannel;
  if (options.workdir) {
    const match = Object.keys(config.agentChannels)
      .filter((dir) => isInside(dir, options.workdir as string))
      .sort((a, b) => b.length - a.length)[0];
    if (match) return config.agentChannels[match] as string;
  }
  return config.fallbackChannel ?? 'unknown';
}
