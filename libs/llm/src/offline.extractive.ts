// A summariser with no model: the span's own sentences, the most telling ones kept verbatim.
// What offline mode writes for a chapter (so `npm start` keeps a chaptered summary without a key), and what
// the recall bench measures memory with: it never says anything the story did not, so a figure
// it moves is the budget's doing, not a model's invention or loss.

const SENTENCE = /[^.!?\n]+[.!?]*/g;
const WORD = /[\p{L}\p{N}]+/gu;

/** Words too common to tell one sentence from another. */
const COMMON = new Set(
  (
    'the a an and or but of to in on at for with by from as is are was were be been it its this that ' +
    'these those i you he she we they me him her us them my your his our their what which who how ' +
    'not no do does did have has had can could would should will just so if then than there here'
  ).split(' '),
);

function wordsOf(text: string): string[] {
  return (text.toLowerCase().match(WORD) ?? []).filter((word) => !COMMON.has(word));
}

/**
 * At most `maxWords` words of `texts`, as whole sentences in story order, chosen as SumBasic
 * chooses them: a word weighs the share of the texts that hold it, a sentence the mean weight of
 * its words, and once a sentence is taken its words weigh their square, so the next choice tells
 * something else rather than the same thing again. Deterministic: ties go to the earlier one.
 */
export function extractiveSummary(texts: readonly string[], maxWords: number): string {
  const weight = new Map<string, number>();
  for (const text of texts) {
    for (const word of new Set(wordsOf(text))) weight.set(word, (weight.get(word) ?? 0) + 1);
  }
  for (const [word, count] of weight) weight.set(word, count / Math.max(1, texts.length));
  const sentences: { text: string; order: number; words: string[]; length: number }[] = [];
  for (const text of texts) {
    for (const match of text.matchAll(SENTENCE)) {
      const sentence = match[0].replace(/\s+/g, ' ').trim();
      const words = [...new Set(wordsOf(sentence))];
      if (words.length < 3) continue;
      const length = sentence.match(WORD)?.length ?? 0;
      sentences.push({ text: sentence, order: sentences.length, words, length });
    }
  }
  const chosen: typeof sentences = [];
  const left = new Set(sentences);
  let used = 0;
  while (left.size > 0) {
    let best: (typeof sentences)[number] | null = null;
    let bestScore = -1;
    for (const sentence of left) {
      if (used + sentence.length > maxWords) continue;
      const score =
        sentence.words.reduce((sum, word) => sum + (weight.get(word) ?? 0), 0) /
        sentence.words.length;
      if (score > bestScore) {
        best = sentence;
        bestScore = score;
      }
    }
    if (!best) break;
    chosen.push(best);
    left.delete(best);
    used += best.length;
    for (const word of best.words) weight.set(word, (weight.get(word) ?? 0) ** 2);
  }
  chosen.sort((a, b) => a.order - b.order);
  return chosen.map((sentence) => sentence.text).join(' ');
}
