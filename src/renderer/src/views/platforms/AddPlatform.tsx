import { useState, type Ref } from 'react';
import { platformInfo, type PlatformName } from '../../../../shared/platforms';
import { PlatformIcon } from '../../components/PlatformIcon';

/** What each platform asks of you, in a few words, for the chooser. */
const WHAT_IT_TAKES: Readonly<Record<PlatformName, string>> = {
  telegram: 'a bot made with @BotFather',
  matrix: 'a bot account on your homeserver',
  discord: 'a bot from the Developer Portal',
  slack: 'an app at api.slack.com',
  signal: 'signal-cli, linked to your phone',
  xmpp: 'an account of its own',
  irc: 'a nick on a server',
  email: 'a mailbox of its own',
};

/**
 * "Add a platform": a chooser of the platforms not on the list yet. Choosing
 * one opens its form on the list; nothing is saved until that form is.
 */
export function AddPlatform({ choices, onChoose, buttonRef }: { choices: readonly PlatformName[]; onChoose: (name: PlatformName) => void; buttonRef?: Ref<HTMLButtonElement> }) {
  const [open, setOpen] = useState(false);
  if (choices.length === 0) return null;
  return (
    <section className="add-platform" aria-label="Add a platform">
      <button type="button" ref={buttonRef} aria-expanded={open} aria-controls="platform-choices" onClick={() => setOpen(!open)}>
        Add a platform
      </button>
      {open && (
        <ul id="platform-choices" className="platform-choices">
          {choices.map((name) => (
            <li key={name}>
              <button
                type="button"
                aria-label={`Add ${platformInfo(name)?.label ?? name}`}
                onClick={() => {
                  setOpen(false);
                  onChoose(name);
                }}
              >
                <PlatformIcon platform={name} />
                <span>
                  <span className="choice-name">{platformInfo(name)?.label ?? name}</span>
                  <span className="muted"> — {WHAT_IT_TAKES[name]}</span>
                </span>
              </button>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
