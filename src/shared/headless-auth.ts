/**
 * How a browser window proves itself to the headless gateway's API. The token
 * travels explicitly on every WebSocket connection, as a subprotocol next to the
 * API's own: browsers send cookies for 127.0.0.1 to every port on it, so a cookie
 * could never be enough (any local server would receive it).
 */

/** The API's subprotocol; the server answers with it, never with the token. */
export const API_SUBPROTOCOL = 'homing.v1';

/** `homing.token.<token>`: the token is base64url, which a subprotocol may carry as is. */
export const TOKEN_SUBPROTOCOL_PREFIX = 'homing.token.';

/** Where the window keeps the token once it has left the address bar (per tab, gone with it). */
export const TOKEN_STORAGE_KEY = 'homing.token';
