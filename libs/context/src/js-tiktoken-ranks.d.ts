// The repo resolves modules the Node 10 way, which does not read package.json
// `exports`, so TypeScript cannot see js-tiktoken's rank subpaths even though
// Node loads them. These declarations state the shape of the bundled tables.
declare module 'js-tiktoken/ranks/cl100k_base' {
  import type { TiktokenBPE } from 'js-tiktoken/lite';
  const ranks: TiktokenBPE;
  export default ranks;
}

declare module 'js-tiktoken/ranks/o200k_base' {
  import type { TiktokenBPE } from 'js-tiktoken/lite';
  const ranks: TiktokenBPE;
  export default ranks;
}
