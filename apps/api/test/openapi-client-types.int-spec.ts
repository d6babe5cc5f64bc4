// The drift check of the typed client (libs/client): the types committed in
// libs/client/src/openapi.generated.ts are what openapi-typescript makes of the document this
// checkout's API serves. A route, a body or an answer changed without regenerating fails here.
// UPDATE_CLIENT_TYPES=1 rewrites the file instead of checking it.
import { writeFileSync } from 'node:fs';
import {
  CLIENT_TYPES_FILE,
  clientTypesDrift,
  clientTypesOf,
  committedClientTypes,
} from '../../../scripts/client-types';
import { startApiHarness, type ApiHarness } from './api.harness';

jest.setTimeout(60_000);

let api: ApiHarness;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
let served: any;

beforeAll(async () => {
  api = await startApiHarness();
  const reply = await api.request('GET', '/docs/json');
  expect(reply.status).toBe(200);
  served = reply.body;
});
afterAll(() => api?.close());

describe('the typed client against the served OpenAPI document', () => {
  it('has committed types that match the document the API serves', async () => {
    const generated = await clientTypesOf(served);
    if (process.env.UPDATE_CLIENT_TYPES === '1') writeFileSync(CLIENT_TYPES_FILE, generated);
    expect(clientTypesDrift(committedClientTypes(), generated)).toBeNull();
  });

  it('fails on a changed route, naming it', async () => {
    // A copy of the document in which one route moved, as a controller edited without
    // regenerating would serve it.
    const changed = structuredClone(served);
    changed.paths['/v1/adventures/{id}/rewind'] = changed.paths['/v1/adventures/{id}/undo'];
    delete changed.paths['/v1/adventures/{id}/undo'];
    const drift = clientTypesDrift(committedClientTypes(), await clientTypesOf(changed));
    expect(drift).not.toBeNull();
    expect(drift).toMatch(/\/v1\/adventures\/\{id\}\/(rewind|undo)/);
  });

  it("fails on a changed answer's shape", async () => {
    const changed = structuredClone(served);
    delete changed.components.schemas.TurnAcceptedView.properties.stream;
    expect(clientTypesDrift(committedClientTypes(), await clientTypesOf(changed))).not.toBeNull();
  });
});
