import { useState } from 'react';
import { ConfirmDialog } from '../../components/ConfirmDialog';
import type { StoredSecret } from './save-settings';
import type { SettingsForm } from './useSettingsForm';

/** A form's outcome at the form, and (when config.json has an error) the offer to replace the file, keeping a backup. */
export function FormMessage({ form, testId, path, onReplaced }: { form: SettingsForm; testId: string; path: string; onReplaced: (stored: readonly StoredSecret[]) => void }) {
  const [confirming, setConfirming] = useState(false);
  if (!form.message) return null;
  return (
    <div className="form-message">
      <p role={form.message.ok ? 'status' : 'alert'} className={form.message.ok ? 'ok-note' : 'error-note'} data-testid={testId}>
        {form.message.text}
      </p>
      {form.refusedForFile && (
        <button type="button" disabled={form.busy} onClick={() => setConfirming(true)}>
          Replace config.json (keeps a backup)
        </button>
      )}
      {confirming && (
        <ConfirmDialog
          title="Replace config.json?"
          body={`${path} has an error. It is copied to a backup beside it (named with today's date and time), then replaced with the settings of this form and the last good file.`}
          confirmLabel="Replace"
          onCancel={() => setConfirming(false)}
          onConfirm={() => {
            setConfirming(false);
            void form.replace().then((stored) => stored && onReplaced(stored));
          }}
        />
      )}
    </div>
  );
}
