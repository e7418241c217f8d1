/**
 * How many tokens a text costs a model, estimated without its tokenizer: the
 * budget that decides when older turns are condensed only needs to be right
 * within some percent, and shipping every family's vocabulary is not worth it.
 *
 * Per family, an average of characters per token for text in Latin and
 * similar scripts (measured on English chat: GPT's o200k/cl100k about 4,
 * Claude about 3.5, Llama 3 and Mistral about 3.7, Qwen and Gemma about 3.5);
 * a character of CJK, emoji or other wide scripts counts as one token, as most
 * vocabularies split them about that finely. The estimate rounds up, so it
 * errs on the side of condensing early.
 */

export type ModelFamily = 'gpt' | 'claude' | 'llama' | 'mistral' | 'qwen' | 'gemma' | 'other';

const CHARS_PER_TOKEN: Record<ModelFamily, number> = {
  gpt: 4,
  claude: 3.5,
  llama: 3.7,
  mistral: 3.7,
  qwen: 3.5,
  gemma: 3.5,
  // Unknown tokenizers: assume a small vocabulary.
  other: 3,
};

/** Per message: the role and the separators a chat template adds. */
export const MESSAGE_OVERHEAD_TOKENS = 4;

export function modelFamily(model: string | undefined): ModelFamily {
  const name = (model ?? '').toLowerCase();
  if (/\b(gpt|o[134])\b|gpt-|chatgpt/.test(name)) return 'gpt';
  if (name.includes('claude')) return 'claude';
  if (name.includes('llama')) return 'llama';
  if (/mistral|mixtral|codestral|ministral/.test(name)) return 'mistral';
  if (/qwen|qwq/.test(name)) return 'qwen';
  if (name.includes('gemma')) return 'gemma';
  return 'other';
}

// Characters a tokenizer usually gives a token each: CJK, kana, hangul, emoji and other pictographs.
const WIDE = /[\u1100-\u11ff\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\u{1f000}-\u{1faff}\u{20000}-\u{3ffff}]/gu;

export function estimateTokens(text: string, family: ModelFamily): number {
  if (text === '') return 0;
  const wide = text.match(WIDE)?.length ?? 0;
  const narrow = [...text].length - wide;
  return wide + Math.ceil(narrow / CHARS_PER_TOKEN[family]);
}

/** A chat message's cost: its text and the template's overhead. */
export function estimateMessageTokens(text: string, family: ModelFamily): number {
  return estimateTokens(text, family) + MESSAGE_OVERHEAD_TOKENS;
}

/** The longest prefix of `text` whose estimate fits `tokens` (for a summary that came out too long). */
export function truncateToTokens(text: string, tokens: number, family: ModelFamily): string {
  if (estimateTokens(text, family) <= tokens) return text;
  const chars = [...text];
  let low = 0;
  let high = chars.length;
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (estimateTokens(chars.slice(0, mid).join('') + '…', family) <= tokens) low = mid;
    else high = mid - 1;
  }
  return chars.slice(0, low).join('') + '…';
}
