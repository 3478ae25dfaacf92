/** A form's or a page's error line, announced by screen readers; nothing when there is no message. */
export function Alert(props: { message: string | null | undefined }) {
  if (!props.message) return null;
  return (
    <p class="error" role="alert">
      {props.message}
    </p>
  );
}
