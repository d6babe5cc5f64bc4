// The code that runs first in every fresh context, inside the isolate: it removes what a script
// must not have, installs AI Dungeon's globals and card functions as plain JavaScript (no host
// callbacks: nothing of the host is reachable from the isolate), and returns `init`, which takes
// the run's input as one JSON string and returns `fin`. After the Library and the hook ran,
// `fin(completion)` picks the result among the three styles (docs/scripting.md §1.2) and serialises text,
// stop, state, cards and logs into one JSON string, the only thing that leaves the isolate.
//
// Everything the harness relies on is captured before user code runs, so a script that
// replaces JSON.stringify, Array.prototype.push or Object.prototype.toJSON cannot change what
// the harness reports (docs/scripting.md, S5). The result envelope is concatenated from primitive strings,
// which JSON.stringify serialises without consulting any toJSON.
import { SCRIPT_LIMITS } from '@chronicle/scripting';

export const HARNESS_SOURCE = `(function () {
  'use strict';
  const G = globalThis;
  const parse = JSON.parse;
  const stringify = JSON.stringify;
  const random = Math.random;
  const floor = Math.floor;
  const freeze = Object.freeze;
  const defineProperty = Object.defineProperty;
  const isArray = Array.isArray;
  const keysOf = Object.keys;
  const apply = Reflect.apply;
  const splice = Array.prototype.splice;
  const sliceString = String.prototype.slice;
  const StringOf = String;
  const ErrorOf = Error;
  const SetOf = Set;
  const setHas = Set.prototype.has;
  const setAdd = Set.prototype.add;
  const MAX_LINES = ${SCRIPT_LIMITS.logLines};
  const MAX_LINE = ${SCRIPT_LIMITS.logLineChars};

  delete G.WebAssembly;
  delete G.SharedArrayBuffer;
  delete G.Atomics;

  // The globals as the script sees them: a bare name here finds a script's own top-level
  // let/const before the global object's property, at the time of the call. No local of the
  // harness may be named text, stop, state or modifier.
  function visibleModifier() { return typeof modifier === 'undefined' ? undefined : modifier; }
  function globalText() { return typeof text === 'undefined' ? undefined : text; }
  function globalStop() { return typeof stop === 'undefined' ? undefined : stop; }
  function globalState() { return typeof state === 'undefined' ? undefined : state; }

  return function init(json) {
    const input = parse(json);
    const lines = [];
    let dropped = 0;

    function show(value) {
      if (typeof value === 'string') return value;
      try {
        const out = stringify(value);
        return out === undefined ? 'null' : out;
      } catch (error) {
        return '[unserialisable]';
      }
    }
    function log() {
      if (lines.length >= MAX_LINES) {
        dropped++;
        return;
      }
      let line = '';
      for (let i = 0; i < arguments.length; i++) line += (i > 0 ? ' ' : '') + show(arguments[i]);
      if (line.length > MAX_LINE) line = apply(sliceString, line, [0, MAX_LINE]);
      lines[lines.length] = line;
    }
    const consoleObject = freeze({ log: log });

    function cards() {
      return G.storyCards;
    }
    function addStoryCard(keys, entry, type = 'Custom', name = keys, notes = '', options) {
      const list = cards();
      const card = {
        id: StringOf(floor(random() * 1e9)),
        keys: keys,
        entry: entry,
        type: type,
        title: name,
        description: notes,
      };
      const length = list.length;
      list[length] = card;
      return options && options.returnCard ? card : length + 1;
    }
    function updateStoryCard(index, keys, entry, type, name, notes) {
      const list = cards();
      const old = list[index];
      if (old === null || typeof old !== 'object') {
        throw new ErrorOf('Story card not found at index ' + index + ' in updateStoryCard');
      }
      list[index] = {
        id: old.id,
        keys: keys,
        entry: entry,
        type: type === undefined ? old.type : type,
        title: name === undefined ? old.title : name,
        description: notes === undefined ? old.description : notes,
      };
    }
    function removeStoryCard(index) {
      const list = cards();
      const old = list[index];
      if (old === null || typeof old !== 'object') {
        throw new ErrorOf('Story card not found at index ' + index + ' in removeStoryCard');
      }
      apply(splice, list, [+index, 1]);
    }

    const startState = input.state !== null && typeof input.state === 'object' ? input.state : {};
    const hadMemory = 'memory' in startState;
    if (!hadMemory) startState.memory = {};
    const history = [];
    for (let i = 0; i < input.history.length; i++) {
      const entry = input.history[i];
      history[i] = { text: entry.text, type: entry.type, rawText: entry.text };
    }
    const info = input.info;
    if (!info.characters) {
      const names = info.characterNames || [];
      const characters = [];
      for (let i = 0; i < names.length; i++) characters[i] = { name: names[i] };
      info.characters = characters;
    }

    const globals = {
      text: input.text,
      stop: false,
      state: startState,
      storyCards: input.storyCards,
      // Copies made for this run: a script may write to them (some pop or sort history), and
      // nothing of them is read back, so the writes are ignored.
      history: history,
      info: info,
      memory: input.memory,
      log: log,
      console: consoleObject,
      sandboxConsole: consoleObject,
      addStoryCard: addStoryCard,
      updateStoryCard: updateStoryCard,
      removeStoryCard: removeStoryCard,
      addWorldEntry: function addWorldEntry(keys, entry) {
        return addStoryCard(keys, entry);
      },
      updateWorldEntry: function updateWorldEntry(index, keys, entry) {
        return updateStoryCard(index, keys, entry);
      },
      removeWorldEntry: function removeWorldEntry(index) {
        return removeStoryCard(index);
      },
    };
    const names = keysOf(globals);
    for (let i = 0; i < names.length; i++) {
      defineProperty(G, names[i], { value: globals[names[i]], writable: true, configurable: true, enumerable: false });
    }
    for (const alias of ['worldInfo', 'worldEntries']) {
      defineProperty(G, alias, {
        get: function () { return G.storyCards; },
        set: function (value) { G.storyCards = value; },
        configurable: true,
        enumerable: false,
      });
    }

    function isResult(value) {
      return typeof value === 'string' || (value !== null && typeof value === 'object' && !isArray(value));
    }
    // Each card object once, where it is first listed: a script that lists the same object twice
    // (MagicCards pins its settings card with unshift every turn, leaving the old entry in
    // place) has one card, not a copy per listing. Identity decides, not position.
    function distinctCards(list) {
      if (!isArray(list)) return list;
      const seen = new SetOf();
      const out = [];
      for (let i = 0; i < list.length; i++) {
        const card = list[i];
        if (card !== null && typeof card === 'object') {
          if (apply(setHas, seen, [card])) continue;
          apply(setAdd, seen, [card]);
        }
        out[out.length] = card;
      }
      return out;
    }
    function field(json) {
      return json === undefined ? 'null' : stringify(json);
    }
    function envelope(resultText, resultStop) {
      let stateJson;
      let cardsJson;
      try {
        const finalState = globalState();
        if (finalState !== null && typeof finalState === 'object' && !hadMemory) {
          const memory = finalState.memory;
          if (memory !== null && typeof memory === 'object' && !isArray(memory) && keysOf(memory).length === 0) {
            delete finalState.memory;
          }
        }
        stateJson = stringify(finalState);
      } catch (error) {
        stateJson = undefined;
      }
      try {
        cardsJson = stringify(distinctCards(G.storyCards));
      } catch (error) {
        cardsJson = undefined;
      }
      let logs = '[';
      for (let i = 0; i < lines.length; i++) logs += (i > 0 ? ',' : '') + stringify(lines[i]);
      logs += ']';
      const textJson =
        resultText === null ? 'null' : typeof resultText === 'string' ? stringify(resultText) : '{"notAString":true}';
      return '{"text":' + textJson + ',"stop":' + (resultStop === true ? 'true' : 'false') +
        ',"state":' + field(stateJson) + ',"storyCards":' + field(cardsJson) +
        ',"logs":' + logs + ',"logsDropped":' + dropped + '}';
    }
    return function fin(completion, failed) {
      if (failed) return envelope(input.text, false);
      let result = completion;
      if (!isResult(result)) {
        const modifierFn = visibleModifier();
        if (typeof modifierFn === 'function') result = modifierFn(globalText());
      }
      let resultText;
      let resultStop;
      if (typeof result === 'string') {
        resultText = result;
        resultStop = globalStop() === true;
      } else if (isResult(result)) {
        resultText = 'text' in result ? result.text : input.text;
        resultStop = result.stop === true;
      } else {
        resultText = globalText();
        resultStop = globalStop() === true;
      }
      if (resultText === 'stop' && input.text !== 'stop') resultStop = true;
      return envelope(resultText, resultStop);
    };
  };
})()
`;
