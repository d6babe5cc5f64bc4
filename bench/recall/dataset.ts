// LongMemEval (Wu et al., ICLR 2025; MIT licence) as the recall bench reads it: one JSON file per
// question, its history as dated sessions of user and assistant turns, the turns that hold the
// answer marked `has_answer`. No file of it is committed here: the bench reads the copy beside
// the repository (../shared/data/longmemeval, with its LICENSE) or the one LONGMEMEVAL_DIR names.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

export interface Turn {
  role: 'user' | 'assistant';
  content: string;
  /** One of the turns that hold the answer. */
  hasAnswer: boolean;
}

export interface Question {
  /** The file's name without .json: `<sessions>_<question id>`. */
  name: string;
  id: string;
  type: string;
  question: string;
  /** Every turn of every session, oldest first. */
  turns: Turn[];
  /** Indexes into `turns` of the evidence: the has_answer turns, else every turn of an answer session. */
  evidence: number[];
}

/** The sample with full histories (about 500 turns in 42–55 sessions per question). */
export const FULL_HISTORY_SAMPLE = 's_sample';

/**
 * Where the data is: LONGMEMEVAL_DIR, else ../shared/data/longmemeval beside the repository (the
 * bench runs from dist/bench, two levels below it).
 */
export function datasetDirectory(): string {
  const configured = process.env.LONGMEMEVAL_DIR;
  const directory = configured
    ? resolve(configured)
    : resolve(__dirname, '..', '..', '..', '..', 'shared', 'data', 'longmemeval');
  if (!existsSync(join(directory, FULL_HISTORY_SAMPLE))) {
    throw new Error(
      `LongMemEval is not at ${directory} (no ${FULL_HISTORY_SAMPLE}/ there): set LONGMEMEVAL_DIR to the directory that holds ${FULL_HISTORY_SAMPLE}/ and LICENSE`,
    );
  }
  return directory;
}

/** All 500 questions, each with only its evidence sessions (1–6). */
export const ORACLE = 'oracle';
/** Sessions in a held-back question's history, as many as the full-history sample's. */
const HELD_BACK_SESSIONS = 48;
/** Held-back questions per question type. */
const HELD_BACK_PER_TYPE = 5;

interface RawQuestion {
  question_id: string;
  question_type: string;
  question: string;
  answer_session_ids: string[];
  haystack_session_ids: string[];
  haystack_sessions: { role: string; content: string; has_answer?: boolean }[][];
}

/**
 * The answerable questions of the full-history sample, in file-name order, the first `limit`.
 * Abstention questions (`_abs`: no answer in the history) are left out, as the official
 * retrieval scoring leaves them out. `only` names one question's file (without .json).
 */
export function loadQuestions(directory: string, limit: number, only?: string): Question[] {
  const folder = join(directory, FULL_HISTORY_SAMPLE);
  const files = readdirSync(folder)
    .filter((file) => file.endsWith('.json') && !file.endsWith('_abs.json'))
    .filter((file) => only === undefined || file === `${only}.json`)
    .sort()
    .slice(0, limit);
  return files.map((file) => parseQuestion(file.slice(0, -'.json'.length), readFile(folder, file)));
}

/**
 * The check held back from tuning: oracle questions the full-history sample does not hold, the
 * first HELD_BACK_PER_TYPE of each type in file-name order, each given a long history of its own
 * evidence sessions spread through the first four fifths of HELD_BACK_SESSIONS sessions, the
 * rest the sessions of the oracle questions after it in file-name order (their own evidence
 * sessions, about other things). Nothing of the engine was tuned on them.
 */
export function loadHeldBack(directory: string, limit: number): Question[] {
  const folder = join(directory, ORACLE);
  const sampled = new Set(
    readdirSync(join(directory, FULL_HISTORY_SAMPLE)).map((file) =>
      file.replace(/\.json$/, '').replace(/^\d+_/, ''),
    ),
  );
  const files = readdirSync(folder)
    .filter((file) => file.endsWith('.json') && !file.endsWith('_abs.json'))
    .sort();
  const raws = files.map((file) => ({ file, raw: readFile(folder, file) }));
  const perType = new Map<string, number>();
  const chosen: Question[] = [];
  raws.forEach(({ file, raw }, index) => {
    if (chosen.length >= limit || sampled.has(raw.question_id)) return;
    const taken = perType.get(raw.question_type) ?? 0;
    if (taken >= HELD_BACK_PER_TYPE) return;
    perType.set(raw.question_type, taken + 1);
    chosen.push(
      parseQuestion(`held-back ${file.slice(0, -'.json'.length)}`, withFiller(raw, raws, index)),
    );
  });
  return chosen;
}

/** `raw`'s evidence sessions spread among the sessions of the questions after it. */
function withFiller(
  raw: RawQuestion,
  raws: readonly { raw: RawQuestion }[],
  index: number,
): RawQuestion {
  const own = new Set(raw.haystack_session_ids);
  const filler: { id: string; session: RawQuestion['haystack_sessions'][number] }[] = [];
  const seen = new Set<string>();
  for (let k = 1; filler.length < HELD_BACK_SESSIONS && k < raws.length; k++) {
    const other = raws[(index + k) % raws.length].raw;
    other.haystack_session_ids.forEach((id, s) => {
      if (own.has(id) || seen.has(id) || filler.length >= HELD_BACK_SESSIONS) return;
      seen.add(id);
      // Another question's answer is no answer to this one.
      const session = other.haystack_sessions[s].map(({ has_answer: _, ...turn }) => turn);
      filler.push({ id, session });
    });
  }
  const evidence = raw.haystack_session_ids.map((id, s) => ({
    id,
    session: raw.haystack_sessions[s],
  }));
  const total = filler.length;
  const sessions = [...filler.slice(0, total - evidence.length)];
  // Evidence k of E at ⌊(k + 1) × 0.8 × total ÷ (E + 1)⌋: none among the newest fifth.
  evidence.forEach((entry, k) => {
    const at = Math.floor(((k + 1) * 0.8 * total) / (evidence.length + 1));
    sessions.splice(at + k, 0, entry);
  });
  return {
    ...raw,
    haystack_session_ids: sessions.map((entry) => entry.id),
    haystack_sessions: sessions.map((entry) => entry.session),
  };
}

function readFile(folder: string, file: string): RawQuestion {
  return JSON.parse(readFileSync(join(folder, file), 'utf8')) as RawQuestion;
}

function parseQuestion(name: string, raw: RawQuestion): Question {
  const turns: Turn[] = [];
  const sessionOf: string[] = [];
  raw.haystack_sessions.forEach((session, s) => {
    for (const turn of session) {
      turns.push({
        role: turn.role === 'assistant' ? 'assistant' : 'user',
        content: turn.content,
        hasAnswer: turn.has_answer === true,
      });
      sessionOf.push(raw.haystack_session_ids[s]);
    }
  });
  let evidence = turns.flatMap((turn, i) => (turn.hasAnswer ? [i] : []));
  if (evidence.length === 0) {
    const answerSessions = new Set(raw.answer_session_ids);
    evidence = sessionOf.flatMap((session, i) => (answerSessions.has(session) ? [i] : []));
  }
  return {
    name,
    id: raw.question_id,
    type: raw.question_type,
    question: raw.question,
    turns,
    evidence,
  };
}
