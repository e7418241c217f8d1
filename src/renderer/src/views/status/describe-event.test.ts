import { describe, expect, it } from 'vitest';
import { describeEvent } from './describe-event';

describe('the activity list', () => {
  it('says in words, as something wrong, that a platform may have lost messages', () => {
    const text = 'Homing was away longer than Telegram keeps messages (24 hours): messages sent to it before that may be lost.';
    expect(describeEvent({ type: 'platform.notice', platform: 'telegram', text, at: 0 })).toEqual({ text: `Telegram: ${text}`, tone: 'bad' });
  });
});
