import type { Locator, Page } from 'playwright-core';

/**
 * Platforms is a list you add to: the agent's card first, a card per platform
 * config.json has, and "Add a platform". A form opens from its card's Edit, or
 * from the chooser for a platform not on the list yet. These open one as a
 * person would and hand back the form.
 */

/** `form[aria-labelledby="telegram-form-title"]`: a platform's form (or the agent's, `agent`), wherever it is open. */
export function settingsForm(page: Page, name: string): Locator {
  return page.locator(`form[aria-labelledby="${name}-form-title"]`);
}

/** Edit on a platform's card (`irc`, `IRC`), unless its form is open already. */
export async function editPlatform(page: Page, name: string, label: string): Promise<Locator> {
  await openWith(page.getByTestId(`platform-${name}`).getByRole('button', { name: `Edit ${label}`, exact: true }));
  return waitForForm(page, name);
}

/** Add a platform → the platform (`Matrix`): its form, on a card of its own, not saved yet. */
export async function addPlatform(page: Page, name: string, label: string): Promise<Locator> {
  await openWith(page.getByRole('button', { name: 'Add a platform', exact: true }));
  await page.getByRole('button', { name: `Add ${label}`, exact: true }).click();
  return waitForForm(page, name);
}

/** Edit on the agent's card. */
export async function editAgent(page: Page): Promise<Locator> {
  await openWith(page.getByRole('button', { name: 'Edit agent', exact: true }));
  return waitForForm(page, 'agent');
}

/** Clicks a button that opens something (aria-expanded), only if it is not open already: a second click would close it. */
async function openWith(button: Locator): Promise<void> {
  await button.waitFor();
  if ((await button.getAttribute('aria-expanded')) !== 'true') await button.click();
}

async function waitForForm(page: Page, name: string): Promise<Locator> {
  const form = settingsForm(page, name);
  await form.waitFor();
  return form;
}
