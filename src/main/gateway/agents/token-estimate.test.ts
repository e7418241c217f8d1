import { describe, expect, it } from 'vitest';
import { estimateTokens, modelFamily, truncateToTokens } from './token-estimate';

describe('token estimates', () => {
  it('pick a family from the model name', () => {
    expect(modelFamily('gpt-4o-mini')).toBe('gpt');
    expect(modelFamily('llama3.2:3b')).toBe('llama');
    expect(modelFamily('qwen2.5-coder')).toBe('qwen');
    expect(modelFamily('mistral-nemo')).toBe('mistral');
    expect(modelFamily('claude-3-5-haiku')).toBe('claude');
    expect(modelFamily('my-finetune')).toBe('other');
    expect(modelFamily(undefined)).toBe('other');
  });

  it('count Latin text by characters per token and wide scripts by character', () => {
    const english = 'The quick brown fox jumps over the lazy dog. '.repeat(10);
    expect(estimateTokens(english, 'gpt')).toBe(Math.ceil(english.length / 4));
    expect(estimateTokens(english, 'other')).toBeGreaterThan(estimateTokens(english, 'gpt'));
    expect(estimateTokens('東京は晴れ', 'gpt')).toBe(5);
    expect(estimateTokens('', 'gpt')).toBe(0);
  });

  it('truncate a text to fit a token count', () => {
    const long = 'word '.repeat(1000);
    const cut = truncateToTokens(long, 100, 'llama');
    expect(estimateTokens(cut, 'llama')).toBeLessThanOrEqual(100);
    expect(cut.endsWith('…')).toBe(true);
    expect(truncateToTokens('short', 100, 'llama')).toBe('short');
  });
});
