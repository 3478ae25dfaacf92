// aedes-persistence ships types for its async memory persistence, but not at the path Node resolves.
declare module 'aedes-persistence/asyncPersistence.js' {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- the typings use export =
  import MemoryPersistence = require('aedes-persistence/types/asyncPersistence');
  export default MemoryPersistence;
}
