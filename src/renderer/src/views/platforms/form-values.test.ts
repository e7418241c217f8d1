import { describe, expect, it } from 'vitest';
import { formFields } from '../../../../shared/platform-forms';
import { PLATFORM_INFO, platformInfo } from '../../../../shared/platforms';
import { formValues, sectionToWrite, sectionWith } from './form-values';
import { fieldAtFault } from './useSettingsForm';

const form = (name: string) => platformInfo(name)!.form;

/** What the form shows for `inForce`, with `edits` typed over it, saved onto `written`. */
function save(name: string, inForce: Record<string, unknown>, written: Record<string, unknown>, edits: Record<string, string | boolean>) {
  const shown = formValues(form(name), inForce);
  return sectionToWrite(form(name), { ...shown, ...edits }, shown, written);
}

describe('the platforms’ forms as data', () => {
  it('each form names exactly its platform’s secrets, and each field once', () => {
    for (const info of PLATFORM_INFO) {
      const secrets = info.form.parts.flatMap((part) => (part.part === 'secret' ? [part.name] : []));
      expect(secrets).toEqual(info.secrets);
      const ids = formFields(info.form).map((field) => (field.kind === 'ids' && field.answers ? `${field.key}:${field.answers}` : field.key));
      expect(new Set(ids).size).toBe(ids.length);
    }
  });
});

describe('a platform form’s values and config.json', () => {
  it('writes only the required fields and what the user changed, not every default', () => {
    expect(save('irc', {}, {}, { host: 'irc.example.org' })).toEqual({ host: 'irc.example.org', nick: 'homing' });
    expect(save('telegram', {}, {}, {})).toEqual({});
    expect(save('telegram', {}, {}, { dmPolicy: 'open', groups: '-100123, -100456' })).toEqual({ dmPolicy: 'open', groups: { '-100123': {}, '-100456': {} } });
  });

  it('rewrites a field config.json already has, and keeps what the form does not show', () => {
    const irc = { host: 'irc.example.org', nick: 'homing', port: 6697, realname: 'Homing', allow: ['alice', { account: 'bob' }] };
    expect(save('irc', irc, irc, { allow: 'alice carol' })).toEqual({ ...irc, allow: ['alice', 'carol', { account: 'bob' }] });
    expect(formValues(form('irc'), irc).allow).toBe('alice');
  });

  it('leaves an emptied optional field out, so its default applies; a port that is not a number goes as typed', () => {
    const xmpp = { jid: 'homing@example.org', host: 'xmpp.example.org', port: 5222, nick: 'bot' };
    expect(save('xmpp', xmpp, xmpp, { host: ' ', port: '', nick: '' })).toEqual({ jid: 'homing@example.org' });
    expect(save('xmpp', xmpp, xmpp, { port: '52x' })).toMatchObject({ port: '52x' });
  });

  it('keeps a group’s or room’s own settings, and new ones start with the defaults', () => {
    const telegram = { groups: { '-100123': { requireMention: false, allowFrom: ['42'] } } };
    expect(save('telegram', telegram, telegram, { groups: '-100123 -100456' }).groups).toEqual({ '-100123': { requireMention: false, allowFrom: ['42'] }, '-100456': {} });
  });

  it('splits Discord’s channels by whether the agent answers every message, keeping each channel’s settings', () => {
    const discord = { channels: { '111111111111111111': { allowFrom: ['1'] }, '222222222222222222': { requireMention: false } } };
    const shown = formValues(form('discord'), discord);
    expect(shown['channels:when-mentioned']).toBe('111111111111111111');
    expect(shown['channels:every-message']).toBe('222222222222222222');
    const swapped = save('discord', discord, discord, { 'channels:when-mentioned': '222222222222222222', 'channels:every-message': '111111111111111111' });
    expect(swapped.channels).toEqual({ '222222222222222222': {}, '111111111111111111': { allowFrom: ['1'], requireMention: false } });
  });

  it('writes email’s servers as their own objects: host always, the rest when set', () => {
    const written = save('email', {}, {}, { address: 'a@example.org', 'imap.host': 'imap.example.org', 'smtp.host': 'smtp.example.org', 'smtp.port': '2525', trustedAuthServId: 'mx.example.org' });
    expect(written).toEqual({ address: 'a@example.org', imap: { host: 'imap.example.org' }, smtp: { host: 'smtp.example.org', port: 2525 }, trustedAuthServId: ['mx.example.org'] });
    expect(formValues(form('email'), { trustedAuthServId: 'mx.example.org' }).trustedAuthServId).toBe('mx.example.org');
  });

  it('tests the settings as typed over those in force', () => {
    const inForce = { host: 'irc.example.org', nick: 'homing', port: 6697, tls: true, channels: [], allow: [], enabled: true, requireAccount: false };
    const values = { ...formValues(form('irc'), inForce), nick: 'other', tls: false };
    expect(sectionWith(form('irc'), values, inForce)).toEqual({ ...inForce, nick: 'other', tls: false });
  });
});

describe('fieldAtFault', () => {
  const labels = Object.fromEntries(formFields(form('email')).map((field) => [field.key, field.label]));
  it('names a field by its label, a nested or listed one too', () => {
    expect(fieldAtFault('config.json: platforms.irc.nick: must be an IRC nick', 'platforms.irc', { nick: 'Nick' })).toEqual({
      name: 'nick',
      words: 'Nick must be an IRC nick (platforms.irc.nick).',
    });
    expect(fieldAtFault('platforms.email.imap.host: must name the server, like imap.example.org', 'platforms.email', labels)?.name).toBe('imap.host');
    expect(fieldAtFault('x: platforms.email.allowFrom[2]: must be an address', 'platforms.email', labels)?.words).toBe('Answer mail from must be an address (platforms.email.allowFrom[2]).');
    expect(fieldAtFault('platforms.irc.nick: must be an IRC nick', 'platforms.email', labels)).toBeNull();
  });
});
