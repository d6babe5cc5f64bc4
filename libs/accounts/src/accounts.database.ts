import type { ColumnType, Generated } from 'kysely';
import type { Database } from '@chronicle/event-store';

// The account tables as Kysely sees them (see the event store's create-accounts migration).

export interface UsersTable {
  id: string;
  name: string;
  created_at: Generated<Date>;
  daily_token_budget: number | null;
}

export interface ApiKeysTable {
  id: string;
  user_id: string;
  prefix: string;
  secret_hash: Buffer;
  name: string;
  created_at: Generated<Date>;
  revoked_at: Date | null;
  last_used_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
}

export interface AccountsDatabase extends Database {
  users: UsersTable;
  api_keys: ApiKeysTable;
}
