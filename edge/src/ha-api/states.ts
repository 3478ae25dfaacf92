/** The mapping moved to the protocol (the cloud's Home Assistant API uses it too). */
export { contextIdFor, toHaState } from '@smarthome/protocol/server/ha/index';
