// Why a question's evidence is missing from a prompt (`npm run bench -- recall --diagnose`): for
// each evidence turn, where recall ranked it (the fused candidates a turn hands the prompt
// builder, and the full lexical and semantic rankings behind them), how many tokens it costs,
// and how many tokens the better-ranked candidates took first. Read, never written: the dry run
// the bench scores is untouched.
import { hypotheticalTurn, type AdventureCommandHandler } from '@chronicle/adventure-store';
import type { RecalledPassage } from '@chronicle/context';
import { MemoryRetrievalService } from '@chronicle/memory-store';
import { containsTurn, normalizePrompt } from './evidence';

export interface EvidenceDiagnosis {
  /** Index of the evidence turn in the question's turns. */
  turn: number;
  /** 1-based rank among the fused candidates; null when not a candidate. */
  fusedRank: number | null;
  lexicalRank: number | null;
  vectorRank: number | null;
  /** Tokens of the passage that holds it (when a candidate). */
  tokens: number | null;
  /** Tokens of the candidates ranked above it (what the budget spends first). */
  tokensAbove: number | null;
  inPrompt: boolean;
}

export interface Diagnosis {
  budget: number;
  recallBudget: number;
  candidates: number;
  evidence: EvidenceDiagnosis[];
}

interface Retriever {
  retrieve: MemoryRetrievalService['retrieve'];
}

/** The recall candidates of the dry run asking `question`, as the preview's retrieval makes them. */
export async function candidatesFor(
  adventures: AdventureCommandHandler,
  retrieval: Retriever,
  adventureId: string,
  question: string,
): Promise<RecalledPassage[]> {
  const head = await adventures.get(adventureId);
  const { state, texts } = hypotheticalTurn(adventures, head, { type: 'story', text: question });
  const result = await retrieval.retrieve(state, texts, head);
  return result?.passages?.candidates ?? [];
}

export function diagnose(
  budget: number,
  recallBudget: number,
  candidates: readonly RecalledPassage[],
  evidence: readonly { turn: number; runs: string[]; inPrompt: boolean }[],
): Diagnosis {
  const normalized = candidates.map((c) => normalizePrompt(c.text));
  return {
    budget,
    recallBudget,
    candidates: candidates.length,
    evidence: evidence.map(({ turn, runs, inPrompt }) => {
      const at = normalized.findIndex((text) => containsTurn(text, runs));
      const hit = at >= 0 ? candidates[at] : null;
      return {
        turn,
        fusedRank: hit ? at + 1 : null,
        lexicalRank: hit?.lexicalRank ?? null,
        vectorRank: hit?.vectorRank ?? null,
        tokens: hit?.tokens ?? null,
        tokensAbove: hit ? candidates.slice(0, at).reduce((sum, c) => sum + c.tokens, 0) : null,
        inPrompt,
      };
    }),
  };
}

/** One line per question and budget: the best-placed evidence turn and why it is not sent. */
export function diagnosisLine(name: string, type: string, d: Diagnosis): string {
  const best = [...d.evidence].sort(
    (a, b) => (a.fusedRank ?? Infinity) - (b.fusedRank ?? Infinity),
  )[0];
  const sent = d.evidence.some((e) => e.inPrompt);
  const why = sent ? 'sent' : best?.fusedRank == null ? 'not ranked' : 'ranked, cut by the budget';
  const where = best
    ? `fused #${best.fusedRank ?? '–'} (lex ${best.lexicalRank ?? '–'}, vec ${best.vectorRank ?? '–'}), ${best.tokens ?? '–'} tok, ${best.tokensAbove ?? '–'} tok above`
    : 'no evidence';
  return `| ${name} | ${type} | ${d.budget} | ${d.recallBudget} | ${why} | ${where} |`;
}
