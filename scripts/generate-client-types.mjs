// openapi-typescript over an OpenAPI document read from stdin; the types on stdout. A process of
// its own because openapi-typescript loads ES modules that jest's CommonJS runtime cannot
// require (see scripts/client-types.ts, which runs it).
import openapiTS, { astToString } from 'openapi-typescript';

let input = '';
process.stdin.setEncoding('utf8');
for await (const piece of process.stdin) input += piece;
const nodes = await openapiTS(JSON.parse(input), { alphabetize: true });
process.stdout.write(astToString(nodes));
