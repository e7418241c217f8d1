import { useState } from 'react';
import type { ConnectionTarget, ConnectionTestResult, HomingApi } from '../../../../shared/api';
import { useOnline } from '../../connection';
import { explainApiError } from '../../plain-words';

export interface SettingsForm {
  readonly message: { readonly text: string; readonly ok: boolean } | null;
  readonly busy: boolean;
  /** Writes `section` into config.json (validated by the gateway with config.json's schema). */
  save(patch: (config: Record<string, unknown>) => Record<string, unknown>): Promise<boolean>;
  test(target: ConnectionTarget, config: Record<string, unknown>): Promise<void>;
  setMessage(message: { text: string; ok: boolean } | null): void;
}

/** Save and "test connection" for a settings form; the gateway's answer is shown at the form. */
export function useSettingsForm(api: HomingApi, current: () => Record<string, unknown>): SettingsForm {
  const [message, setMessage] = useState<{ text: string; ok: boolean } | null>(null);
  const [busy, setBusy] = useState(false);
  const online = useOnline();
  return {
    message,
    // Save and Test need the gateway: while it is away the forms' buttons are off.
    busy: busy || !online,
    setMessage,
    async save(patch) {
      setBusy(true);
      const result = await api.setConfig({ config: patch(current()) });
      setBusy(false);
      if (!result.ok) {
        setMessage({ text: explainApiError('save', result.error), ok: false });
        return false;
      }
      setMessage({ text: 'Saved. Homing applies it now.', ok: true });
      return true;
    },
    async test(target, config) {
      setBusy(true);
      setMessage({ text: 'Testing…', ok: true });
      const result = await api.testConnection({ target, config });
      setBusy(false);
      const outcome: ConnectionTestResult = result.ok ? result.value : { ok: false, message: explainApiError('test', result.error) };
      setMessage({ text: outcome.message, ok: outcome.ok });
    },
  };
}
