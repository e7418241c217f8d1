import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import type { DeliveryPage, SessionPage, TranscriptPage } from '../../src/shared/api';
import { waitUntil } from '../support/wait';
import { agentStarts, type CrashRow } from './suite';

/** Transcript files hold what was said; the user's text is in one of them before the agent runs. */
function transcriptsMention(dataDir: string, text: string): boolean {
  const dir = join(dataDir, 'sessions');
  return existsSync(dir) && readdirSync(dir).some((file) => readFileSync(join(dir, file), 'utf8').includes(text));
}

/** The window's own chat: no service, the agent's turn is the moment to kill in. */
export const localCrashes: CrashRow = {
  platform: 'the local chat',
  cases(suite) {
    it('answers a local message again after a crash during its agent turn: one reply, in the transcript and delivered', async () => {
      const text = 'what did I ask before the crash?';
      const [startedFile, goFile] = [suite.file('started'), suite.file('go')];
      suite.configure(['--started', startedFile, '--wait-for', goFile]);
      const first = await suite.start();
      await first.api.call('sendLocalMessage', { text });
      await waitUntil('the agent to start its turn', () => agentStarts(startedFile).length === 1, 10_000);
      expect(transcriptsMention(suite.dataDir, text)).toBe(true);

      await suite.crash(first.gateway);
      writeFileSync(goFile, ''); // from now on the agent answers at once
      const second = await suite.start();

      let page: DeliveryPage | undefined;
      await waitUntil(
        'the interrupted turn to be answered and delivered',
        async () => {
          page = await second.api.call<DeliveryPage>('listDeliveries', {});
          return page.deliveries.some((row) => row.state === 'delivered');
        },
        15_000,
      );
      expect(page!.deliveries).toHaveLength(1);
      const row = page!.deliveries[0]!;
      expect(row).toMatchObject({ platform: 'local', state: 'delivered', attempts: 0, chunksDelivered: 1, chunksTotal: 1 });

      const sessions = await second.api.call<SessionPage>('listSessions', {});
      expect(sessions.sessions).toHaveLength(1);
      const transcript = await second.api.call<TranscriptPage>('getTranscript', { sessionId: sessions.sessions[0]!.sessionId });
      expect(transcript.messages.map((message) => [message.role, message.text])).toEqual([
        ['user', text],
        ['assistant', `You said: ${text}`],
      ]);
      expect(transcript.messages[1]).toMatchObject({ obligationId: row.id });
      // The agent ran twice: the killed turn and its re-run; nothing else.
      expect(agentStarts(startedFile).map((line) => line.replace(/^started \d+ /, ''))).toEqual([text, text]);
    });
  },
};
