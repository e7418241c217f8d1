import { loadOnce } from '../../load-once';

/**
 * Slack's own libraries, loaded when a Slack connection (or its Test
 * connection) starts: a gateway without Slack does not pay for importing them
 * (axios and ws among them) at every start.
 */
export type SlackWebApi = typeof import('@slack/web-api');
export type SlackSocketMode = typeof import('@slack/socket-mode');

export const loadSlackWebApi = loadOnce((): Promise<SlackWebApi> => import('@slack/web-api'));
export const loadSlackSocketMode = loadOnce((): Promise<SlackSocketMode> => import('@slack/socket-mode'));
