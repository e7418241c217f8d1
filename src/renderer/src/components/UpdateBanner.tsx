import { useState } from 'react';
import type { UpdateNotice } from '../../../shared/api';
import { updateWords } from '../plain-words';

const STORAGE_KEY = 'homing.updateDismissed';

function dismissedVersion(): string | null {
  try {
    return localStorage.getItem(STORAGE_KEY);
  } catch {
    return null;
  }
}

/**
 * "Homing v0.3.0 is available — what is new", from the overview's `update`.
 * Dismissing it hides that version for good (kept across reloads); a newer
 * version, or the same one once it is downloaded, shows again.
 */
export function UpdateBanner({ update }: { update: UpdateNotice | null | undefined }) {
  const [dismissed, setDismissed] = useState(dismissedVersion);
  if (!update) return null;
  const key = update.ready === true ? `${update.version} ready` : update.version;
  if (key === dismissed) return null;
  const dismiss = () => {
    setDismissed(key);
    try {
      localStorage.setItem(STORAGE_KEY, key);
    } catch {
      // Storage refused (private mode): dismissed until the next reload.
    }
  };
  return (
    <p className="update-banner" role="status" data-testid="update-banner">
      <span>
        {updateWords(update)} —{' '}
        <a href={update.url} target="_blank" rel="noopener noreferrer">
          what is new
        </a>
      </span>
      <button type="button" className="link" onClick={dismiss} aria-label={`Dismiss: Homing v${update.version}`}>
        Dismiss
      </button>
    </p>
  );
}
