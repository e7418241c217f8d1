import { useEffect, useState } from 'react';
import type { DeliveryRow, PlatformStatus } from '../../../../shared/api';
import type { DeliveryPages } from '../../hooks/useDeliveryPages';
import { useVirtualWindow } from '../../hooks/useVirtualWindow';
import { DeliveryItem, type RowAction } from './DeliveryItem';

/** Every row has this height, so the list can place row N without measuring rows 0..N-1. */
const ROW_HEIGHT = 164;
/** On a narrow window (the CSS's 640 px step) the reason wraps to up to five lines, so rows are taller. */
const NARROW_ROW_HEIGHT = 236;
const NARROW = '(max-width: 640px)';

function useRowHeight(): number {
  const [narrow, setNarrow] = useState(() => typeof matchMedia === 'function' && matchMedia(NARROW).matches);
  useEffect(() => {
    if (typeof matchMedia !== 'function') return;
    const query = matchMedia(NARROW);
    const update = () => setNarrow(query.matches);
    query.addEventListener('change', update);
    return () => query.removeEventListener('change', update);
  }, []);
  return narrow ? NARROW_ROW_HEIGHT : ROW_HEIGHT;
}

interface DeliveryListProps {
  readonly label: string;
  readonly data: DeliveryPages;
  readonly total: number;
  readonly platforms: readonly PlatformStatus[];
  readonly now: number;
  readonly notes: ReadonlyMap<string, { text: string; error: boolean }>;
  readonly busy: ReadonlySet<string>;
  readonly onAction: (action: RowAction, row: DeliveryRow) => void;
}

/** The virtualized list: a tall empty box, and only the rows on screen placed inside it. */
export function DeliveryList({ label, data, total, platforms, now, notes, busy, onAction }: DeliveryListProps) {
  const rowHeight = useRowHeight();
  const view = useVirtualWindow(total, rowHeight);
  const { first, last } = view;
  const { show } = data;
  useEffect(() => {
    if (total > 0) show(first, last);
    // `show` changes identity every render; the window is what matters.
  }, [first, last, total]);

  const rows = [];
  for (let index = first; index <= last && index < total; index++) {
    const row = data.rowAt(index);
    rows.push(
      <div key={row?.id ?? `loading-${index}`} className="virtual-row" style={{ transform: `translateY(${index * rowHeight}px)`, height: rowHeight }}>
        {row ? (
          <DeliveryItem
            row={row}
            index={index}
            total={total}
            platform={platforms.find((platform) => platform.name === row.platform)}
            now={now}
            note={notes.get(row.id)}
            busy={busy.has(row.id)}
            onAction={onAction}
          />
        ) : (
          <div className="delivery loading" aria-hidden="true">
            Loading…
          </div>
        )}
      </div>,
    );
  }
  return (
    <div
      ref={view.scrollRef}
      onScroll={view.onScroll}
      className="delivery-scroll"
      tabIndex={0}
      role="list"
      aria-label={label}
      data-testid="delivery-list"
    >
      <div className="virtual-space" style={{ height: total * rowHeight }}>
        {rows}
      </div>
    </div>
  );
}
