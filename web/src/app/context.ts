import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { PortalKind } from '../api/session.ts';
import type { LiveStates } from '../live/states.ts';
import type { Controls } from '../live/controls.ts';

export interface AppContext {
  kind: PortalKind;
  live: LiveStates;
  controls: Controls;
}

export const App = createContext<AppContext | null>(null);

export function useApp(): AppContext {
  const ctx = useContext(App);
  if (!ctx) throw new Error('outside the signed-in app');
  return ctx;
}
