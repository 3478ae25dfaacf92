export { AutomationEngine, AutomationError, newWebhookId, type WebhookOrigin, type WebhookResult } from './engine.ts';
export { mountAutomationRoutes, WEBHOOK_BODY_LIMIT, type AutomationRouteDeps } from './routes.ts';
export {
  UrlCaller,
  CallUrlError,
  isPublicAddress,
  type CallUrlOptions,
  type CallUrlRequest,
  type CallUrlResponse,
} from './call-url.ts';
export { AutomationTemplates } from './template.ts';
export { AutomationStore, AUTOMATION_MIGRATIONS, migrateAutomationTables } from './store.ts';
export { MemoryStates, MemoryServices, MemoryMqtt, MemoryEvents } from './memory-ports.ts';
export * from './ports.ts';
