export { createLogger, type Logger } from '@smarthome/protocol/server';
