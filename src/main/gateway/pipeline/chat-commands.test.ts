import { describe, expect, it } from 'vitest';
import { isCommandOnly, parseChatCommand, statusText } from './chat-commands';

describe('chat commands', () => {
  it('are /new and /reset with optional text, /status and /help, also in Telegram\'s /command@bot form', () => {
    expect(parseChatCommand('/new')).toEqual({ command: 'new', rest: '' });
    expect(parseChatCommand('/new some text')).toEqual({ command: 'new', rest: 'some text' });
    expect(parseChatCommand(' /status@HomingBot ')).toEqual({ command: 'status' });
    expect(parseChatCommand('/help')).toEqual({ command: 'help' });
    expect(parseChatCommand('/status please')).toBeUndefined();
    expect(parseChatCommand('what is /help?')).toBeUndefined();
    expect(parseChatCommand('/helpful')).toBeUndefined();
  });

  it('leave the agent\'s history when they were only a command', () => {
    expect(isCommandOnly('/status')).toBe(true);
    expect(isCommandOnly('/new')).toBe(true);
    expect(isCommandOnly('/new tell me a joke')).toBe(false);
    expect(isCommandOnly('hello')).toBe(false);
  });

  it('/status says the key, the messages, what a summary stands for, the context used, what is cut and the agent', () => {
    const base = { sessionKey: 'agent:main:irc:channel:#homing', turns: 12, contextTokens: 2000, budgetTokens: 8000, agent: 'openai · llama3.2' };
    expect(statusText({ ...base, summary: { covers: 7, cut: 1 }, cutNow: 2 })).toBe(
      [
        'Conversation: agent:main:irc:channel:#homing',
        'Messages: 12 (the agent sees a summary instead of the 7 oldest messages; 1 of them was cut to fit before condensing)',
        'Context: about 2000 of 8000 tokens (25%)',
        'Cut to fit: 2 long messages the agent is shown only in part',
        'Agent: openai · llama3.2',
      ].join('\n'),
    );
    expect(statusText({ ...base, cutNow: 0 })).toBe(
      ['Conversation: agent:main:irc:channel:#homing', 'Messages: 12', 'Context: about 2000 of 8000 tokens (25%)', 'Agent: openai · llama3.2'].join('\n'),
    );
  });
});
