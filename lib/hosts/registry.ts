import { claudeHooks } from './claude.js';
import { codexHooks } from './codex.js';
import { cursorHooks } from './cursor.js';
import { geminiHooks } from './gemini.js';
import type { HostHooks } from './settings.js';

// In the order they are shown.

export const HOST_HOOKS = {
  claude: claudeHooks,
  codex: codexHooks,
  gemini: geminiHooks,
  cursor: cursorHooks,
} satisfies Record<string, HostHooks>;

export type ConfigurableHost = keyof typeof HOST_HOOKS;

export const CONFIGURABLE_HOSTS = Object.keys(HOST_HOOKS) as ConfigurableHost[];

export function isConfigurableHost(host: string): host is ConfigurableHost {
  return (CONFIGURABLE_HOSTS as string[]).includes(host);
}
