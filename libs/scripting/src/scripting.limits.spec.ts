import { scriptLimitsFor, turnBudgetLeft } from './scripting.limits';

describe('script limits', () => {
  const operator = { hookTimeoutMs: 2_000, turnBudgetMs: 5_000, memoryLimitMb: 64 };

  it("give an adventure what it asks for under the operator's limits, never more", () => {
    expect(
      scriptLimitsFor(
        { scriptHookTimeoutMs: 500, scriptTurnBudgetMs: 60_000, scriptMemoryLimitMb: 32 },
        operator,
      ),
    ).toEqual({ hookTimeoutMs: 500, turnBudgetMs: 5_000, memoryLimitMb: 32 });
  });

  it("leave a turn's later hooks what its earlier runs did not spend, and only its own", () => {
    const runs = [
      { turnId: 't1', ms: 1_200 },
      { turnId: 't0', ms: 4_000 },
      { turnId: 't1', ms: 300.5 },
    ];
    expect(turnBudgetLeft(5_000, runs, 't1')).toBe(3_499.5);
    expect(turnBudgetLeft(5_000, runs, 't2')).toBe(5_000);
    expect(turnBudgetLeft(1_000, runs, 't1')).toBe(0);
  });
});
