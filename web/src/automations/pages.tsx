import { AutomationEditor } from './Editor.tsx';
import { AutomationsList } from './List.tsx';
import './automations.css';

export function AutomationsPages({ path }: { path: string }) {
  const m = /^\/automations\/([^/]+)$/.exec(path);
  if (!m) return <AutomationsList />;
  return <AutomationEditor id={m[1] === 'new' ? null : decodeURIComponent(m[1])} />;
}
