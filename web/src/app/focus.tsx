import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';

/**
 * When a panel or confirm step closes (`open` back to null) and its removal dropped the focus
 * onto the page, focus goes to `target(what was open)`: keyboard users stay where they were.
 */
export function useFocusBack<T>(open: T | null, target: (was: T) => HTMLElement | null | undefined): void {
  const was = useRef<T | null>(open);
  useEffect(() => {
    const prev = was.current;
    was.current = open;
    if (prev !== null && open === null) focusIfLost(target(prev));
  }, [open]);
}

/** Focuses `el` when the focus is on no element (the one that had it was removed). */
export function focusIfLost(el: HTMLElement | null | undefined): void {
  if (!document.activeElement || document.activeElement === document.body) el?.focus();
}

/** A keydown handler: Escape inside the element calls `close`. */
export const onEscape = (close: () => void) => (e: KeyboardEvent) => {
  if (e.key !== 'Escape') return;
  e.preventDefault();
  close();
};

/**
 * The confirm/cancel pair that stands in for a destructive button: Cancel, the safe choice,
 * takes the focus; Escape cancels.
 */
export function ConfirmStep(props: {
  label: string;
  onConfirm: () => void;
  onCancel: () => void;
  cancelClass?: string;
  children: ComponentChildren;
}) {
  const cancel = useRef<HTMLButtonElement>(null);
  useEffect(() => cancel.current?.focus(), []);
  return (
    <span role="group" aria-label={props.label} onKeyDown={onEscape(props.onCancel)}>
      <button type="button" class="danger" onClick={props.onConfirm}>
        {props.children}
      </button>{' '}
      <button ref={cancel} type="button" class={props.cancelClass} onClick={props.onCancel}>
        Cancel
      </button>
    </span>
  );
}
