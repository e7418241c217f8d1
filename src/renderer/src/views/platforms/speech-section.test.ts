import { describe, expect, it } from 'vitest';
import { speechFields, speechSection, withSpeech } from './speech-section';

describe('the Voice notes form and config.json’s speech section', () => {
  it('shows no speech key as off, and off removes the key, keeping every other one', () => {
    expect(speechFields(undefined).kind).toBe('off');
    const config = { agent: { type: 'builtin' }, speech: { type: 'openai', url: 'http://127.0.0.1:8080/v1/audio/transcriptions' } };
    expect(withSpeech(config, speechSection({ ...speechFields(config.speech), kind: 'off' }, config.speech))).toEqual({ agent: { type: 'builtin' } });
  });

  it('leaves empty optional fields out, and keeps what the form does not show while the kind stays', () => {
    const before = { type: 'openai', url: 'http://a/v1/audio/transcriptions', model: 'small', language: 'de', apiKeyEnv: 'SPEECH_KEY' };
    const fields = { ...speechFields(before), url: ' http://b/v1/audio/transcriptions ', model: '', language: '' };
    expect(speechSection(fields, before)).toEqual({ type: 'openai', url: 'http://b/v1/audio/transcriptions', apiKeyEnv: 'SPEECH_KEY' });
  });

  it('splits a program’s arguments on spaces and drops the other kind’s settings', () => {
    const fields = { ...speechFields({ type: 'openai', url: 'http://a/' }), kind: 'command' as const, command: 'whisper-cli', args: ' -f  {file} -nt ' };
    expect(speechSection(fields, { type: 'openai', url: 'http://a/', apiKeyEnv: 'K' })).toEqual({ type: 'command', command: 'whisper-cli', args: ['-f', '{file}', '-nt'] });
  });
});
