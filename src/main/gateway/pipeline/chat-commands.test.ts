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

  it('/status says the key, the messages, the context used and the agent', () => {
    expect(statusText({ sessionKey: 'agent:main:irc:channel:#homing', turns: 12, contextTokens: 2000, budgetTokens: 8000, summarised: true, agent: 'openai · llama3.2' })).toBe(
      [
        'Conversation: agent:main:irc:channel:#homing',
        'Messages: 12 (older ones condensed into a summary)',
        'Context: about 2000 of 8000 tokens (25%)',
        'Agent: openai · llama3.2',
      ].join('\n'),
    );
  });
});
