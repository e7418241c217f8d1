import { useState } from 'react';
import type { DeliveryFilter, DeliveryRow, GatewayOverview, HomingApi } from '../../../../shared/api';
import { ConfirmDialog } from '../../components/ConfirmDialog';
import { ErrorNote } from '../../components/ErrorNote';
import { useOnline } from '../../connection';
import { useDeliveryPages } from '../../hooks/useDeliveryPages';
import { useNow } from '../../hooks/useNow';
import { useRowActions } from '../../hooks/useRowActions';
import { chatLabel, explainApiError, platformLabel } from '../../plain-words';
import { copyText } from '../../copy-text';
import { DeliveryCounts } from './DeliveryCounts';
import type { RowAction } from './DeliveryItem';
import { DeliveryList } from './DeliveryList';
import { EmptyDeliveries } from './EmptyDeliveries';
import { countRetryAll, replies, retryAllQuestion, type RetryAllCounts } from './retry-all';

interface DeliveriesViewProps {
  readonly api: HomingApi;
  readonly overview: GatewayOverview | null;
  readonly onOpenConversation: (sessionId: string) => void;
}

const TABS: readonly { id: DeliveryFilter; label: string }[] = [
  { id: 'owed', label: 'Owed' },
  { id: 'abandoned', label: 'Given up' },
  { id: 'delivered', label: 'Delivered' },
];

/** What is owed, why, and the one click that fixes it. */
export function DeliveriesView({ api, overview, onOpenConversation }: DeliveriesViewProps) {
  const [filter, setFilter] = useState<DeliveryFilter>('owed');
  const data = useDeliveryPages(api, filter);
  const now = useNow();
  const online = useOnline();
  const rows = useRowActions<string, { text: string; error: boolean }>();
  const [confirming, setConfirming] = useState<DeliveryRow | null>(null);
  const [bulkNote, setBulkNote] = useState<{ text: string; error: boolean } | null>(null);
  const [retryingAll, setRetryingAll] = useState<{ platform: string; counts: RetryAllCounts } | null>(null);
  const platforms = overview?.platforms ?? [];

  const note = (id: string, text: string | null, error = false) => rows.note(id, text === null ? null : { text, error });
  const { notes, busy, withBusy } = rows;

  const retry = (row: DeliveryRow) =>
    withBusy(row.id, async () => {
      const platform = platforms.find((candidate) => candidate.name === row.platform);
      if (row.state === 'pending' || row.state === 'attempting') {
        // Owed and not failed: it waits for its platform. Sending now means reconnecting it (or sweeping, if it is up).
        const result = platform && platform.state !== 'connected' ? await api.reconnectPlatform({ name: row.platform }) : await api.sweepNow();
        if (!result.ok) return note(row.id, explainApiError('send it now', result.error), true);
        note(row.id, platform && platform.state !== 'connected' ? `Reconnecting to ${platformLabel(row.platform)}…` : 'Sending…');
        return;
      }
      const result = await api.retryDelivery({ id: row.id });
      if (!result.ok) {
        note(row.id, explainApiError('retry', result.error), true);
        data.reload();
        return;
      }
      note(row.id, null);
      data.reload();
    });

  const discard = (row: DeliveryRow) =>
    withBusy(row.id, async () => {
      const result = await api.discardDelivery({ id: row.id });
      if (!result.ok) return note(row.id, explainApiError('discard', result.error), true);
      note(row.id, null);
      data.reload();
    });

  const onAction = (action: RowAction, row: DeliveryRow) => {
    switch (action) {
      case 'retry':
        void retry(row);
        return;
      case 'discard':
        setConfirming(row);
        return;
      case 'copy':
        void api.getDeliveryText({ id: row.id }).then(async (result) => {
          if (!result.ok) return note(row.id, explainApiError('copy the text', result.error), true);
          const copied = await copyText(result.value.text);
          note(row.id, copied ? 'Copied' : 'Could not copy: the browser refused the clipboard', !copied);
        });
        return;
      case 'open':
        void api.findSession({ keyOrId: row.sessionKey }).then((result) => {
          if (!result.ok) return note(row.id, explainApiError('open the conversation', result.error), true);
          onOpenConversation(result.value.sessionId);
        });
        return;
    }
  };

  /** Counts first, then asks: "Retry all" also revives given-up replies, and says how many. */
  const askRetryAll = async (platform: string) => {
    const counts = await countRetryAll(api, platform);
    if (!counts.ok) return setBulkNote({ text: explainApiError(`count the replies to ${platformLabel(platform)}`, counts.error), error: true });
    if (counts.value.retrying + counts.value.givenUp === 0) {
      return setBulkNote({ text: `Nothing to retry for ${platformLabel(platform)}: no reply to it failed or was given up.`, error: false });
    }
    setRetryingAll({ platform, counts: counts.value });
  };

  const retryAll = async (platform: string, counts: RetryAllCounts) => {
    const result = await api.retryDeliveries({ platform });
    if (!result.ok) return setBulkNote({ text: explainApiError(`retry everything for ${platformLabel(platform)}`, result.error), error: true });
    const revived = counts.givenUp > 0 ? ` (${counts.givenUp} of them had been given up)` : '';
    setBulkNote({ text: `${replies(result.value.retried)} to ${platformLabel(platform)} will be sent again${revived}.`, error: false });
    data.reload();
  };

  const total = data.total ?? 0;
  return (
    <section className="view deliveries" aria-labelledby="deliveries-title">
      <div className="view-head">
        <h2 id="deliveries-title">Deliveries</h2>
        <p className="muted">
          Every reply is recorded before it is sent. <strong>Owed</strong> means the agent answered but the reply has not reached the chat yet.
        </p>
      </div>
      {overview && <DeliveryCounts counts={overview.deliveries} />}
      <div className="toolbar">
        <div role="tablist" aria-label="Which replies" className="tabs">
          {TABS.map((tab) => (
            <button
              key={tab.id}
              type="button"
              role="tab"
              id={`tab-${tab.id}`}
              aria-selected={filter === tab.id}
              aria-controls="delivery-panel"
              onClick={() => setFilter(tab.id)}
            >
              {tab.label}
            </button>
          ))}
        </div>
        {filter !== 'delivered' && (
          <div className="bulk" aria-label="Retry all">
            {platforms
              .filter((platform) => platform.name !== 'local')
              .map((platform) => (
                <button key={platform.name} type="button" disabled={!online} onClick={() => void askRetryAll(platform.name)}>
                  Retry all for {platformLabel(platform.name)}
                </button>
              ))}
          </div>
        )}
      </div>
      {bulkNote && (
        <p role={bulkNote.error ? 'alert' : 'status'} className={bulkNote.error ? 'error-note' : 'ok-note'}>
          {bulkNote.text}
        </p>
      )}
      {/* While the gateway is away the header says so; the list says only what it cannot show. */}
      <ErrorNote message={online && data.error ? explainApiError('load the list', data.error) : null} />
      <div id="delivery-panel" role="tabpanel" aria-labelledby={`tab-${filter}`} className="delivery-panel">
        {data.total === null && !online ? (
          <p className="muted pad" data-testid="deliveries-unknown">
            This list is read from the gateway page by page, so it cannot be shown while the gateway is away. The counts above are the last known.
          </p>
        ) : data.total === 0 ? (
          <EmptyDeliveries filter={filter} />
        ) : (
          <DeliveryList
            label={`${TABS.find((tab) => tab.id === filter)!.label} replies, ${total}`}
            data={data}
            total={total}
            platforms={platforms}
            now={now}
            notes={notes}
            busy={busy}
            onAction={onAction}
          />
        )}
      </div>
      {retryingAll && (
        <ConfirmDialog
          title={`Retry all for ${platformLabel(retryingAll.platform)}?`}
          body={retryAllQuestion(retryingAll.platform, retryingAll.counts)}
          confirmLabel={`Retry ${retryingAll.counts.retrying + retryingAll.counts.givenUp}`}
          cancelLabel="Cancel"
          danger={false}
          onCancel={() => setRetryingAll(null)}
          onConfirm={() => {
            const { platform, counts } = retryingAll;
            setRetryingAll(null);
            void retryAll(platform, counts);
          }}
        />
      )}
      {confirming && (
        <ConfirmDialog
          title="Discard this reply?"
          body={`The reply to ${chatLabel(confirming)} (“${confirming.preview.slice(0, 80)}”) will never be sent. It stays in the conversation's transcript.`}
          confirmLabel="Discard"
          onCancel={() => setConfirming(null)}
          onConfirm={() => {
            const row = confirming;
            setConfirming(null);
            void discard(row);
          }}
        />
      )}
    </section>
  );
}
