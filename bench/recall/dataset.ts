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
