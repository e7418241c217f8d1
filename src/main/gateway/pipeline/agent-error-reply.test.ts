import { describe, expect, it } from 'vitest';
import type { AgentErrorKind } from '../agents/agent';
import { agentErrorReply } from './pipeline';

describe('an agent failure reply', () => {
  const kinds: AgentErrorKind[] = ['timeout', 'cancelled', 'unreachable', 'bad-response', 'failed'];
  const error = '/home/me/bin/my-agent exited with code 2: cannot open /home/me/.config/Homing/config.json (http://10.0.0.5:11434)';

  it.each(kinds)('sends nothing about this machine to a chat platform (%s)', (kind) => {
    const text = agentErrorReply({ ok: false, kind, error }, 'irc');
    expect(text).not.toMatch(/\/home|my-agent|10\.0\.0\.5|config\.json/);
    expect(text).toMatch(/^⚠ /);
  });

  it('keeps the details in the local chat, which only this machine sees', () => {
    expect(agentErrorReply({ ok: false, kind: 'failed', error }, 'local')).toContain('/home/me/bin/my-agent');
  });
});
