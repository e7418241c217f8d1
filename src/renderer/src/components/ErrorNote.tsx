/** An error shown where it happened (never a blank screen): announced, and kept until the next try. */
export function ErrorNote({ message, testId }: { message: string | null; testId?: string }) {
  if (!message) return null;
  return (
    <p role="alert" className="error-note" data-testid={testId}>
      {message}
    </p>
  );
}
