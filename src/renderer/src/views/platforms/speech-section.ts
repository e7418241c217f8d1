/**
 * The Voice notes form's fields and config.json's top-level `speech` section:
 * off (no key), an OpenAI-compatible transcription URL, or a program. What the
 * form does not show (`apiKeyEnv`, `timeoutMs`, `cwd`) is kept while the kind
 * stays the same.
 */

export type SpeechKind = 'off' | 'openai' | 'command';

export interface SpeechFields {
  readonly kind: SpeechKind;
  readonly url: string;
  readonly model: string;
  readonly language: string;
  readonly command: string;
  /** Separated by spaces, as the command agent's. */
  readonly args: string;
}

type Section = Record<string, unknown>;

export function speechFields(speech: unknown): SpeechFields {
  const section = (speech ?? {}) as Section;
  const kind: SpeechKind = section.type === 'openai' || section.type === 'command' ? section.type : 'off';
  return {
    kind,
    url: String(section.url ?? ''),
    model: String(section.model ?? ''),
    language: String(section.language ?? ''),
    command: String(section.command ?? ''),
    args: ((section.args as string[] | undefined) ?? []).join(' '),
  };
}

/** The `speech` section the fields make (undefined: off), on `previous` (config.json's own). */
export function speechSection(fields: SpeechFields, previous: unknown): Section | undefined {
  const before = (previous ?? {}) as Section;
  const keep = before.type === fields.kind ? before : {};
  switch (fields.kind) {
    case 'off':
      return undefined;
    case 'openai': {
      // Left empty, the optional fields are left out: the schema refuses an empty model or language.
      const { model: _model, language: _language, ...rest } = keep;
      const model = fields.model.trim();
      const language = fields.language.trim();
      return { ...rest, type: 'openai', url: fields.url.trim(), ...(model ? { model } : {}), ...(language ? { language } : {}) };
    }
    case 'command':
      return { ...keep, type: 'command', command: fields.command.trim(), args: fields.args.split(/\s+/).filter(Boolean) };
  }
}

/** The whole config with `speech` set, or removed when off; every other key as it was. */
export function withSpeech(config: Section, section: Section | undefined): Section {
  const { speech: _speech, ...rest } = config;
  return section === undefined ? rest : { ...rest, speech: section };
}

/** The Agent card's line about voice notes. */
export function describeSpeech(speech: unknown): string {
  const section = (speech ?? {}) as Section;
  switch (section.type) {
    case 'openai':
      return `Voice notes are transcribed by ${String(section.url ?? '?')}.`;
    case 'command':
      return `Voice notes are transcribed by ${[String(section.command ?? '?'), ...((section.args as string[] | undefined) ?? [])].join(' ')}.`;
    default:
      return 'Voice notes are not transcribed: the agent is told one came.';
  }
}
