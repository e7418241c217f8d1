import { describe, expect, it } from 'vitest';
import { findAgentServers, USUAL_AGENT_SERVERS } from './discovery';

/** A fetch that answers for some ports only, as the servers on a machine would. */
function machine(answers: Record<number, () => Response>): typeof fetch {
  return (async (input: string | URL | Request) => {
    const url = new URL(String(input));
    const answer = answers[Number(url.port)];
    if (!answer) throw Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error('refused'), { code: 'ECONNREFUSED' }) });
    return answer();
  }) as typeof fetch;
}

const models = (...ids: string[]) => () => Response.json({ object: 'list', data: ids.map((id) => ({ id, object: 'model' })) });

describe('finding the local model servers', () => {
  it('lists the usual servers that answer, with their models, in the usual order', async () => {
    const found = await findAgentServers({ fetch: machine({ 8000: models('Qwen/Qwen2.5-7B'), 11434: models('llama3.2:latest', 'qwen2.5:7b') }) });
    expect(found).toEqual([
      { name: 'Ollama', baseUrl: 'http://127.0.0.1:11434/v1', models: ['llama3.2:latest', 'qwen2.5:7b'] },
      { name: 'vLLM', baseUrl: 'http://127.0.0.1:8000/v1', models: ['Qwen/Qwen2.5-7B'] },
    ]);
    expect(USUAL_AGENT_SERVERS.map((server) => server.port)).toEqual([11434, 1234, 8080, 8000]);
  });

  it('skips what answers but is no model server: an error page, HTML, a body that is not a list, one too large', async () => {
    const found = await findAgentServers({
      fetch: machine({
        11434: () => new Response('not found', { status: 404 }),
        1234: () => new Response('<html>hello</html>', { status: 200 }),
        8080: () => Response.json({ data: 'nope' }),
        8000: () => new Response(JSON.stringify({ data: [{ id: 'x'.repeat(100) }] }).padEnd(2 * 1024 * 1024, ' ')),
      }),
    });
    expect(found).toEqual([]);
  });

  it('keeps only string model ids', async () => {
    const found = await findAgentServers({ fetch: machine({ 1234: () => Response.json({ data: [{ id: 'ok' }, { id: 7 }, {}, null, { id: '' }] }) }) });
    expect(found).toEqual([{ name: 'LM Studio', baseUrl: 'http://127.0.0.1:1234/v1', models: ['ok'] }]);
  });
});
