import { Inject, Injectable } from '@nestjs/common';
import { usageReport, type UsageQuery, type UsageReport } from '@chronicle/accounts';
import { EVENT_STORE_DB, type Database } from '@chronicle/event-store';
import { modelPriceTable, type AppConfig, type ModelPriceTable } from '@chronicle/platform';
import type { Kysely } from 'kysely';
import { APP_CONFIG } from '../app-config.token';

/** The ledger over the log, priced from the table the configuration put together. */
@Injectable()
export class UsageLedger {
  private readonly prices: ModelPriceTable;

  constructor(
    @Inject(EVENT_STORE_DB) private readonly db: Kysely<Database>,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.prices = modelPriceTable(config);
  }

  report(query: UsageQuery): Promise<UsageReport> {
    return usageReport(this.db, query, this.prices);
  }
}
