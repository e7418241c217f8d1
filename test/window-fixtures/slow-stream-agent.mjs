#!/usr/bin/env node
/**
 * A command agent that streams its reply a word at a time (`--word-ms N`, default 60),
 * so the window test can watch text arrive and check that nothing else moves.
 */
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { 'word-ms': { type: 'string' } } });
const wordMs = Number(values['word-ms'] ?? 60);
let raw = '';
for await (const chunk of process.stdin) raw += chunk;
const turn = JSON.parse(raw);
const words = `You said: ${turn.message.text}. ${'Here is a longer answer that arrives one word at a time, so the transcript grows while you watch it. '.repeat(3)}Done.`.split(' ');
for (const [index, word] of words.entries()) {
  process.stdout.write(index === 0 ? word : ` ${word}`);
  await new Promise((resolve) => setTimeout(resolve, wordMs));
}
process.stdout.write('\n');
