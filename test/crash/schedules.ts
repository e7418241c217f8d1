import { writeFileSync } from 'node:fs';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { ScheduleRow, SessionPage, TranscriptPage } from '../../src/shared/api';
import { RESEND_MARKER } from '../../src/main/gateway/delivery/marker';
import { FakeTelegram, type FakeUser } from '../support/fake-telegram';
import { waitUntil } from '../support/wait';
import type { ApiSocket } from '../support/api-socket';
import { agentStarts, type CrashRow } from './suite';

/**
 * Schedules through the real headless gateway, writing to a Telegram chat on
 * the fake Bot API: made with `/every` and `/once` in the chat and through the
 * window's API, firing at their (short) times, paused, run now — and killed
 * with SIGKILL between a run's record and the agent's answer, and in the
 * middle of sending its reply.
 */
export const scheduleCrashes: CrashRow = {
  platform: 'Telegram, with schedules',
  cases(suite) {
    let fake: FakeTelegram;
    let alice: FakeUser;

    beforeEach(async () => {
      fake = new FakeTelegram();
      await fake.start();
      alice = fake.addUser({ id: 7000000001, first_name: 'Alice' });
      suite.use({ telegram: { apiRoot: fake.apiRoot, tokenEnv: 'TELEGRAM_TOKEN', allowFrom: [String(alice.id)], pollTimeoutSeconds: 2 } }, { TELEGRAM_TOKEN: fake.token });
    });

    afterEach(() => fake.stop());

    const texts = () => fake.sentTo(alice.id).map((message) => message.text);
    const count = (text: string) => texts().filter((sent) => sent === text).length;
    const localReplies = async (api: ApiSocket) => {
      const { sessions } = await api.call<SessionPage>('listSessions');
      const local = sessions.find((session) => session.platform === 'local');
      if (!local) return [];
      const page = await api.call<TranscriptPage>('getTranscript', { sessionId: local.sessionId, pageSize: 500 });
      return page.messages.filter((message) => message.role === 'assistant').map((message) => message.text);
    };
    const schedules = async (api: ApiSocket) => (await api.call<{ schedules: ScheduleRow[] }>('listSchedules')).schedules;

    it('fires schedules made in the chat and through the window at their time, on Telegram; a paused one does not fire, run now does', async () => {
      suite.configure([]);
      const { api } = await suite.start();
      await waitUntil('the bot polling', () => fake.polling, 15_000);
      fake.userSays({ from: alice, text: '/every 2 seconds ping' });
      await waitUntil('the schedule made', () => texts().some((text) => text.startsWith('⏰ Scheduled “ping”: every 2 seconds')), 15_000);
      await waitUntil('two runs answered', () => count('You said: ping') >= 2, 15_000);
      const [made] = await schedules(api);
      expect(made).toMatchObject({ createdVia: 'chat', where: { platform: 'telegram' }, body: 'ping' });

      await api.call('updateSchedule', { id: made!.id, paused: true });
      await new Promise((resolve) => setTimeout(resolve, 1_500)); // a run already started finishes
      const paused = count('You said: ping');
      await new Promise((resolve) => setTimeout(resolve, 4_000));
      expect(count('You said: ping'), 'no run while paused').toBe(paused);

      await api.call('runScheduleNow', { id: made!.id });
      await waitUntil('the run now answered', () => count('You said: ping') === paused + 1, 15_000);

      // Made in the window for the same conversation: a fixed text, once, two seconds from now.
      const { sessions } = await api.call<SessionPage>('listSessions');
      const chat = sessions.find((session) => session.platform === 'telegram')!;
      await api.call('addSchedule', { repeat: 'once', when: 'in 2 seconds', action: 'text', body: 'a note from the window', sessionKey: chat.sessionKey });
      await waitUntil('the window’s schedule delivered', () => count('a note from the window') === 1, 15_000);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect(count('a note from the window')).toBe(1);
      expect(count('You said: ping')).toBe(paused + 1);

      // Made with /every in the window's own chat: it fires there.
      await api.call('sendLocalMessage', { text: '/every 2 seconds local ping' });
      await waitUntil('the local schedule answered twice', async () => (await localReplies(api)).filter((text) => text === 'You said: local ping').length >= 2, 15_000);
      expect((await schedules(api)).find((row) => row.body === 'local ping')).toMatchObject({ createdVia: 'chat', where: { platform: 'local' } });
    });

    it('a kill between the run’s record and the agent’s answer: answered once after restart, never twice', async () => {
      const go = suite.file('go');
      const started = suite.file('started');
      suite.configure(['--wait-for', go, '--started', started]);
      const first = await suite.start();
      await waitUntil('the bot polling', () => fake.polling, 15_000);
      fake.userSays({ from: alice, text: '/once in 2 seconds Tell me the time' });
      await waitUntil('the agent asked', () => agentStarts(started).some((line) => line.endsWith('Tell me the time')), 20_000);
      expect((await schedules(first.api))[0]!.lastRun).toMatchObject({ state: 'running' });
      await suite.crash(first.gateway);

      writeFileSync(go, '');
      const second = await suite.start();
      await waitUntil('the answer', () => count('You said: Tell me the time') === 1, 20_000);
      await waitUntil('the run finished', async () => (await schedules(second.api))[0]!.lastRun?.state !== 'running', 10_000);
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      expect(count('You said: Tell me the time')).toBe(1);
      expect((await schedules(second.api))[0]).toMatchObject({ nextRunAt: null, lastRun: { state: 'answered' } });
    });

    it('a kill in the middle of sending a scheduled reply: resumed after restart, the marker only on the part in flight', async () => {
      const paragraphs = Array.from({ length: 120 }, (_, i) => `Part ${i}: **bold ${i}** and some words to make it long enough to need chunks.`);
      suite.configure(['--reply-file', suite.replyFile(paragraphs)]);
      const first = await suite.start();
      await waitUntil('the bot polling', () => fake.polling, 15_000);
      fake.userSays({ from: alice, text: '/once in 2 seconds long please' });
      await waitUntil('the schedule made', () => texts().some((text) => text.startsWith('⏰ Scheduled')), 15_000);
      const before = fake.sentTo(alice.id).length;
      let sends = 0;
      const stop = fake.fault((method) => (method === 'sendMessage' && ++sends === 2 ? { kind: 'hang-after' } : undefined));
      await waitUntil('the reply’s second chunk on its way', () => fake.sentTo(alice.id).length === before + 2, 20_000);
      await suite.crash(first.gateway);
      stop();

      const second = await suite.start();
      await waitUntil('the scheduled reply delivered', async () => (await schedules(second.api))[0]!.lastRun?.state === 'answered', 20_000);
      await suite.whenDelivered(second.api, 20_000);
      await waitUntil('every chunk sent', () => texts().slice(before).join('\n').includes('Part 119:'), 20_000);
      const sent = fake.sentTo(alice.id).slice(before);
      expect(sent[0]!.text.startsWith(RESEND_MARKER)).toBe(false);
      expect(sent[2]!.text).toBe(`${RESEND_MARKER}\n${sent[1]!.text}`);
      expect(sent.slice(3).every((message) => !message.text.startsWith(RESEND_MARKER))).toBe(true);
      const shown = [sent[0]!, ...sent.slice(2)].map((message) => message.text.replace(`${RESEND_MARKER}\n`, '')).join('\n\n');
      expect([...shown.matchAll(/Part (\d+): bold \1 and/g)].map((match) => Number(match[1]))).toEqual(paragraphs.map((_, i) => i));
    });
  },
};
