// The V8 flags every Chronicle process runs with: the apps as `npm start` and the test harness
// spawn them, and `npm run bench` / `npm run replay` (package.json), the Dockerfile and
// docker-compose.yml, which cannot import this and write the same flags out.
//
// A turn allocates a lot that dies young: a projection loaded from a snapshot is ~10,000 fresh
// node objects, a context build thousands of strings, a narration's events their JSON. With
// V8's default young generation (16 MB semi-spaces on 64-bit), its collections took a fifth of
// a snapshot load and promoted objects that would have died a moment later; at 32 MB a
// 10,000-node snapshot decodes in ~6 ms instead of ~7.5 (bench/replay.bench.ts). The cost is
// at most ~100 MB more resident memory per process under load.
export const NODE_RUNTIME_FLAGS: readonly string[] = ['--max-semi-space-size=32'];
