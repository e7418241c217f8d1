import { ApiFailure, type ApiHandlers } from '../api/server';
import type { PairingStore } from './pairing-store';

type PairingHandlers = Pick<ApiHandlers, 'listPairing' | 'decidePairing' | 'revokePairing' | 'dismissPairingFlood'>;

/**
 * The window's (and `homing pairing`'s) view of pairing. `onApproved` lets the
 * platform greet a sender once they may talk to the agent.
 */
export function pairingApiHandlers(pairing: () => PairingStore, onApproved: (approved: { platform: string; chatId: string }) => void): PairingHandlers {
  return {
    listPairing: () => pairing().view(),
    decidePairing: ({ code, decision }) => {
      const result = pairing().decide(code, decision);
      if (!result.ok) throw new ApiFailure('not-found', result.error);
      if (decision === 'approve') onApproved({ platform: result.platform, chatId: result.chatId });
      return { decision, platform: result.platform, name: result.name };
    },
    revokePairing: ({ platform, sender }) => ({ revoked: pairing().revoke(platform, sender) }),
    dismissPairingFlood: ({ platform }) => ({ forgotten: pairing().dismissFlood(platform) }),
  };
}
