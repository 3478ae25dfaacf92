// nunjucks ships no types; parser.ts gives the parts it uses their shapes.
declare module 'nunjucks/src/lexer.js' {
  const lexer: unknown;
  export default lexer;
}
declare module 'nunjucks/src/nodes.js' {
  const nodes: unknown;
  export default nodes;
}
declare module 'nunjucks/src/parser.js' {
  const parser: unknown;
  export default parser;
}
