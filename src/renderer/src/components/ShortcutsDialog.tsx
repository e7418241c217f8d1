import { Fragment } from 'react';
import { SHORTCUTS } from '../hooks/shortcuts';
import { useModalDialog } from '../hooks/useModalDialog';

/**
 * The `?` list of keyboard shortcuts: a native modal <dialog> (focus stays in
 * it, Escape closes it). When it goes away, focus goes back to what opened it.
 */
export function ShortcutsDialog({ onClose }: { onClose: () => void }) {
  const ref = useModalDialog();
  return (
    <dialog
      ref={ref}
      className="confirm shortcuts-dialog"
      aria-labelledby="shortcuts-title"
      data-testid="shortcuts-dialog"
      onCancel={(event) => {
        event.preventDefault();
        onClose();
      }}
      // A click on the backdrop (outside the dialog's box) closes it too.
      onClick={(event) => {
        if (event.target === event.currentTarget) {
          const box = event.currentTarget.getBoundingClientRect();
          const inside = event.clientX >= box.left && event.clientX <= box.right && event.clientY >= box.top && event.clientY <= box.bottom;
          if (!inside) onClose();
        }
      }}
    >
      <h2 id="shortcuts-title">Keyboard shortcuts</h2>
      <dl className="shortcut-list">
        {SHORTCUTS.map(({ keys, what }) => (
          <Fragment key={what}>
            <dt>
              {keys.map((combo, index) => (
                <Fragment key={combo.join('+')}>
                  {index > 0 && <span className="muted-or"> or </span>}
                  {combo.map((key, at) => (
                    <Fragment key={key}>
                      {at > 0 && '+'}
                      <kbd>{key}</kbd>
                    </Fragment>
                  ))}
                </Fragment>
              ))}
            </dt>
            <dd>{what}</dd>
          </Fragment>
        ))}
      </dl>
      <p className="muted">Single keys work when you are not typing in a field.</p>
      <div className="actions">
        <button type="button" autoFocus onClick={onClose}>
          Close
        </button>
      </div>
    </dialog>
  );
}
