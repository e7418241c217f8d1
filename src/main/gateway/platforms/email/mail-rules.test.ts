import { describe, expect, it } from 'vitest';
import { describeAuthResults, readAuthResults } from './auth-results';
import { automaticReason } from './automatic';
import { withoutQuotedTail } from './inbound';
import { replyMessageId } from './outbound';
import { replyReferences, replySubject, threadRoot } from './threading';
import { trustedAuthServIds } from './trusted-auth-servers';

const headers = (entries: Record<string, string>) => new Map(Object.entries(entries).map(([key, value]) => [key.toLowerCase(), [value]]));
const OWN = new Set(['agent@test.local']);

describe('automatic mail', () => {
  it('is recognised by Auto-Submitted other than no, an empty Return-Path, Precedence, list headers and own addresses', () => {
    expect(automaticReason(headers({ 'Auto-Submitted': 'auto-replied' }), 'a@x.org', OWN)).toMatch(/Auto-Submitted/);
    expect(automaticReason(headers({ 'Auto-Submitted': 'auto-generated' }), 'a@x.org', OWN)).toMatch(/Auto-Submitted/);
    expect(automaticReason(headers({ 'Auto-Submitted': 'No' }), 'a@x.org', OWN)).toBeUndefined();
    expect(automaticReason(headers({ 'Return-Path': '<>' }), 'a@x.org', OWN)).toMatch(/Return-Path/);
    expect(automaticReason(headers({ 'Return-Path': '<a@x.org>' }), 'a@x.org', OWN)).toBeUndefined();
    for (const value of ['bulk', 'list', 'junk', 'Bulk']) expect(automaticReason(headers({ Precedence: value }), 'a@x.org', OWN)).toMatch(/Precedence/);
    expect(automaticReason(headers({ Precedence: 'first-class' }), 'a@x.org', OWN)).toBeUndefined();
    expect(automaticReason(headers({ 'List-Id': '<l.x.org>' }), 'a@x.org', OWN)).toMatch(/List-Id/);
    expect(automaticReason(headers({ 'List-Unsubscribe': '<mailto:u@x.org>' }), 'a@x.org', OWN)).toMatch(/List-Unsubscribe/);
    expect(automaticReason(headers({}), 'agent@test.local', OWN)).toMatch(/own addresses/);
    expect(automaticReason(headers({}), undefined, OWN)).toMatch(/no sender/);
    expect(automaticReason(headers({}), 'a@x.org', OWN)).toBeUndefined();
  });
});

describe('threads', () => {
  it('are rooted at the first References id, else In-Reply-To, else the Message-ID', () => {
    expect(threadRoot({ references: '<a@x> <b@x>', inReplyTo: '<b@x>', messageId: '<c@x>' })).toBe('<a@x>');
    expect(threadRoot({ inReplyTo: '<b@x> (comment)', messageId: '<c@x>' })).toBe('<b@x>');
    expect(threadRoot({ references: 'junk', messageId: '<c@x>' })).toBe('<c@x>');
  });

  it('replies as Re: once, with the root and the message answered as References', () => {
    expect(replySubject('Re: RE: Aw: plans')).toBe('Re: plans');
    expect(replySubject(undefined)).toBe('Re: (no subject)');
    expect(replySubject('a\r\nb')).toBe('Re: a b');
    expect(replyReferences('<root@x>', '<last@x>')).toEqual(['<root@x>', '<last@x>']);
    expect(replyReferences('<root@x>', '<root@x>')).toEqual(['<root@x>']);
    expect(replyReferences(null, 'not an id')).toEqual([]);
  });

  it('gives every chunk key its own stable Message-ID in the own domain', () => {
    expect(replyMessageId('0a1b2c', 'me@example.org')).toBe('<homing.0a1b2c@example.org>');
    expect(replyMessageId('0a1b2c', 'me@example.org')).toBe(replyMessageId('0a1b2c', 'me@example.org'));
    expect(replyMessageId('<evil>\r\nBcc: x', 'me@example.org')).toBe('<homing.evilBccx@example.org>');
  });
});

describe('Authentication-Results', () => {
  const trusted = ['mx.test.local'];

  it('believes only the topmost header with a trusted authserv-id, and checks alignment with From', () => {
    const forged = 'evil.example; spf=pass smtp.mailfrom=bank.example; dkim=pass header.d=bank.example';
    const real = 'mx.test.local; spf=fail smtp.mailfrom=bank.example; dkim=none';
    expect(readAuthResults([real, forged], 'ceo@bank.example', trusted).verdict).toBe('fail');
    expect(readAuthResults([forged, real], 'ceo@bank.example', trusted).verdict).toBe('fail');
    // A forged header with the trusted id below the server's own is not the one believed.
    expect(readAuthResults([real, 'mx.test.local; dkim=pass header.d=bank.example'], 'ceo@bank.example', trusted).verdict).toBe('fail');
    expect(readAuthResults(['MX.Test.Local; dkim=pass header.d=bank.example'], 'ceo@bank.example', trusted).verdict).toBe('pass');
    expect(readAuthResults(['mx.test.local; dkim=pass header.d=other.example (comment; with semicolon); spf=none'], 'ceo@bank.example', trusted).verdict).toBe('none');
    expect(readAuthResults(['mx.test.local; dkim=pass header.d=bank.example; spf=fail smtp.mailfrom=x@bank.example'], 'ceo@bank.example', trusted).verdict).toBe('pass');
    expect(readAuthResults(['mx.test.local; spf=pass smtp.mailfrom=ceo@mail.bank.example'], 'ceo@bank.example', trusted).verdict).toBe('pass');
    expect(readAuthResults(['mx.test.local; dmarc=fail header.from=bank.example; dkim=pass header.d=bank.example'], 'ceo@bank.example', trusted).verdict).toBe('fail');
    expect(readAuthResults([], 'ceo@bank.example', trusted).verdict).toBe('none');
  });

  it('believes no header when no server is trusted: the topmost may be the sender\u2019s own', () => {
    const forged = readAuthResults(['mx.test.local; spf=pass smtp.mailfrom=ceo@bank.example; dkim=pass header.d=bank.example; dmarc=pass'], 'ceo@bank.example', []);
    expect(forged).toMatchObject({ server: undefined, verdict: 'none', ignored: ['mx.test.local'] });
    expect(describeAuthResults(forged)).toMatch(/not believed .*trustedAuthServId.* sender not verified/);
  });

  it('are described in words for the agent', () => {
    const results = readAuthResults(['mx.test.local; spf=pass smtp.mailfrom=a@x.org; dkim=pass header.d=x.org; dmarc=pass'], 'a@x.org', trusted);
    expect(describeAuthResults(results)).toBe('SPF pass (x.org), DKIM pass (x.org), DMARC pass — sender verified, says mx.test.local');
    expect(describeAuthResults(readAuthResults([], 'a@x.org', trusted))).toMatch(/not checked/);
  });
});

describe('the trusted mail servers', () => {
  const imap = (host: string) => ({ host, security: 'tls' as const, verifyCertificate: true });

  it('are the configured authserv-ids, else the provider\u2019s known one (Gmail), else none', () => {
    expect(trustedAuthServIds({ trustedAuthServId: ['mx.example.org'], imap: imap('imap.gmail.com') })).toEqual(['mx.example.org']);
    expect(trustedAuthServIds({ trustedAuthServId: ['a.example', 'b.example'], imap: imap('imap.example.org') })).toEqual(['a.example', 'b.example']);
    expect(trustedAuthServIds({ imap: imap('IMAP.gmail.com') })).toEqual(['mx.google.com']);
    expect(trustedAuthServIds({ imap: imap('127.0.0.1') })).toEqual([]);
  });
});

describe('quoted replies', () => {
  it('lose the quoted previous message at the end, not quotes in the middle', () => {
    expect(withoutQuotedTail('Sounds good.\n\nOn Mon, Alice wrote:\n> plans?\n> \n')).toBe('Sounds good.\n');
    expect(withoutQuotedTail('> you said\nI disagree.')).toBe('> you said\nI disagree.');
    expect(withoutQuotedTail('> only a quote')).toBe('> only a quote');
  });
});
