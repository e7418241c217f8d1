import type { PairingOverview, PlatformStatus } from '../../../../shared/api';
import { PLATFORM_INFO, type PlatformName } from '../../../../shared/platforms';

/**
 * Which platforms Platforms lists, and what it says about the agent: pure
 * functions of config.json (as in force) and the gateway's overview.
 *
 * A platform is on the list once config.json has a section for it, enabled or
 * not. A fresh config has none (the schema's `enabled` default applies only
 * inside a section), so a fresh install lists only the local chat.
 */

type Section = Record<string, unknown>;

function sections(config: unknown): Section {
  return (((config ?? {}) as Section).platforms ?? {}) as Section;
}

/** Whether config.json has a section for the platform. */
export function isConfigured(config: unknown, name: string): boolean {
  return sections(config)[name] !== undefined;
}

/** Whether a configured platform is switched on (its section's `enabled`, true unless it says false). */
export function isEnabled(config: unknown, name: string): boolean {
  const section = sections(config)[name] as Section | undefined;
  return section !== undefined && section.enabled !== false;
}

/**
 * The platforms to show as cards, in the window's order: those config.json has
 * (null until the window has read it: then those the gateway reports running),
 * and `opened` ones being added.
 */
export function listedPlatforms(config: unknown, running: readonly PlatformStatus[], opened: ReadonlySet<string>): PlatformName[] {
  const known = (name: string) => (config === null || config === undefined ? running.some((platform) => platform.name === name) : isConfigured(config, name));
  return PLATFORM_INFO.map((info) => info.name).filter((name) => known(name) || opened.has(name));
}

/** The platforms "Add a platform" offers: those not on the list yet. */
export function addablePlatforms(listed: readonly string[]): PlatformName[] {
  return PLATFORM_INFO.map((info) => info.name).filter((name) => !listed.includes(name));
}

/** Whether a platform has anything in pairing to show: requests, approved senders, or a flood. */
export function hasPairing(pairing: PairingOverview | null, platform: string): boolean {
  if (!pairing) return false;
  return [pairing.requests, pairing.approved, pairing.floods].some((entries) => entries.some((entry) => entry.platform === platform));
}

/** Which agent answers, in a line: its kind and what it runs. */
export function describeAgent(agent: unknown): string {
  const section = (agent ?? { type: 'builtin' }) as Section;
  switch (section.type) {
    case 'openai':
      return `OpenAI-compatible server: ${String(section.model ?? '?')} at ${String(section.baseUrl ?? '?')}`;
    case 'command':
      return `A program run for each turn: ${commandLine(section)}`;
    case 'acp':
      return `An Agent Client Protocol agent: ${commandLine(section)}`;
    default:
      return 'The built-in agent: it explains Homing and needs nothing. Edit to choose your own.';
  }
}

function commandLine(section: Section): string {
  const args = Array.isArray(section.args) ? section.args.map(String) : [];
  return [String(section.command ?? '?'), ...args].join(' ');
}
