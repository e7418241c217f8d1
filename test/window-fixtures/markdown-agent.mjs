#!/usr/bin/env node
/**
 * A command agent for the window's Markdown and Stop tests. A message with
 * "slow" in it gets a long reply, one word every 150 ms (time to press Stop);
 * any other gets a Markdown reply with a code block, a list, a link and HTML
 * that must stay text.
 */
let raw = '';
for await (const chunk of process.stdin) raw += chunk;
const turn = JSON.parse(raw);
if (turn.message.text.includes('slow')) {
  for (let i = 1; i <= 400; i++) {
    process.stdout.write(`word${i} `);
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
  process.stdout.write('\n');
} else {
  process.stdout.write(
    [
      'Here is **bold**, *italic* and `inline code`.',
      '',
      '```js',
      'const answer = "<b>not bold</b>";',
      '```',
      '',
      '- first',
      '- second',
      '',
      'A [link](https://example.org/docs) and <script>window.pwned = true</script> <img src=x onerror="window.pwned = true">',
      '',
    ].join('\n'),
  );
}
