import { useModalDialog } from '../hooks/useModalDialog';

interface ConfirmDialogProps {
  readonly title: string;
  readonly body: string;
  readonly confirmLabel: string;
  /** The safe choice's label (default "Keep it"). */
  readonly cancelLabel?: string;
  /** Whether confirming destroys something (a red button); default true. */
  readonly danger?: boolean;
  readonly onConfirm: () => void;
  readonly onCancel: () => void;
}

/**
 * A modal question (native <dialog>: focus is trapped and Escape cancels). Cancel has focus first: the safe choice.
 * When it goes away, focus goes back to what opened it, so a keyboard user continues where they were.
 */
export function ConfirmDialog({ title, body, confirmLabel, cancelLabel = 'Keep it', danger = true, onConfirm, onCancel }: ConfirmDialogProps) {
  const ref = useModalDialog();
  return (
    <dialog
      ref={ref}
      className="confirm"
      aria-labelledby="confirm-title"
      aria-describedby="confirm-body"
      onCancel={(event) => {
        event.preventDefault();
        onCancel();
      }}
    >
      <h2 id="confirm-title">{title}</h2>
      <p id="confirm-body">{body}</p>
      <div className="actions">
        <button type="button" autoFocus onClick={onCancel}>
          {cancelLabel}
        </button>
        <button type="button" className={danger ? 'danger' : undefined} onClick={onConfirm}>
          {confirmLabel}
        </button>
      </div>
    </dialog>
  );
}
