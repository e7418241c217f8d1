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
