import { ApiFailure, type ApiHandlers } from '../api/server';
import type { Gateway } from '../gateway';
import { testConnection } from '../platforms/connection-test';

type PipelineHandlers = Pick<
  ApiHandlers,
  'sendLocalMessage' | 'cancelTurn' | 'listPlatforms' | 'reconnectPlatform' | 'testConnection' | 'getConfig' | 'setConfig' | 'replaceConfig' | 'getLogTail' | 'setSecret'
>;

/** The API's methods for the local chat, platforms and configuration. */
export function pipelineApiHandlers(gateway: Gateway): PipelineHandlers {
  return {
    sendLocalMessage: async ({ text, clientMessageId }) => {
      await gateway.ready;
      if (gateway.local.state() !== 'connected') throw new ApiFailure('unavailable', 'the gateway is stopping');
      const message = gateway.local.receive(text, clientMessageId);
      return { messageRef: message.messageRef };
    },
    cancelTurn: ({ sessionId }) => ({ cancelled: gateway.pipeline.cancel(sessionId) }),
    listPlatforms: () => gateway.platforms.list(),
    reconnectPlatform: async ({ name }) => {
      if (!(await gateway.platforms.reconnect(name))) throw new ApiFailure('not-found', `no platform named ${name} is configured`);
      return gateway.platforms.status(name)!;
    },
    testConnection: ({ target, config }) =>
      testConnection(target, config, {
        secrets: gateway.secrets,
        env: gateway.env,
        savedAgent: gateway.config.current.agent,
        savedConfig: gateway.config.current,
      }),
    getConfig: () => gateway.configView(),
    getLogTail: (params) => ({ lines: gateway.logTail.tail(params?.lines ?? 200) }),
    // Answers once the new config is in force (or refused, with nothing written).
    setConfig: async ({ config }) => {
      const result = await gateway.config.write(config);
      if (!result.ok) throw new ApiFailure('conflict' in result ? 'conflict' : 'bad-request', result.error);
      return gateway.configView();
    },
    replaceConfig: async ({ config }) => {
      const result = await gateway.config.replace(config, new Date(gateway.clock.now()));
      if (!result.ok) throw new ApiFailure('bad-request', result.error);
      return { view: gateway.configView(), backup: result.backup ?? null };
    },
    setSecret: async ({ name, value }) => {
      if (value === null) gateway.secrets.delete(name);
      else gateway.secrets.set(name, value);
      await gateway.refresh();
      return { secretsSet: gateway.secrets.names() };
    },
  };
}
