/**
 * A dependency loaded on first use rather than at start (a platform's client
 * library, the ACP SDK): `load` runs once, and every call shares its promise.
 * A failed load (a broken install) is tried again at the next call.
 */
export function loadOnce<T>(load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | undefined;
  return () => {
    if (!loading) {
      const attempt = load();
      loading = attempt;
      attempt.catch(() => {
        if (loading === attempt) loading = undefined;
      });
    }
    return loading;
  };
}

/**
 * A CommonJS module's export, whether the loader gave it as a named export or
 * only under `default`; `library` names it in the error when it has none.
 */
export function commonJsExport<M extends object, K extends string>(module: M, name: K, library: string): K extends keyof M ? M[K] : never {
  const direct = (module as Record<string, unknown>)[name];
  const fallback = ((module as { default?: Record<string, unknown> }).default ?? {})[name];
  const value = direct ?? fallback;
  if (value === undefined) throw new Error(`the ${library} library has no ${name} (a broken install?)`);
  return value as K extends keyof M ? M[K] : never;
}
