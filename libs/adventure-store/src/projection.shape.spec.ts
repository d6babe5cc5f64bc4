// Snapshots are keyed by `projectorVersion` (adventure.state.ts) and written by codec
// `SNAPSHOT_CODEC` (snapshot.codec.ts): a snapshot of another version or codec is ignored and
// the projection is folded again. So a change to the projection's shape must bump the first, and
// a change to how a snapshot is laid out the second, or a snapshot of the old shape is read as
// the new one. This spec reads both shapes from the types themselves (the TypeScript checker:
// every field, optional or not, of every nested type of ours) and holds them to the ones recorded
// in projection.shapes.txt with the versions they were recorded at.
//
// When it fails: bump what it names, then record the new shapes with
// UPDATE_PROJECTION_SHAPES=1 npx jest libs/adventure-store/src/projection.shape.spec.ts
// (it refuses to record a changed shape under an unchanged version).

import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { projectorVersion } from '@chronicle/adventure';
import { SNAPSHOT_CODEC } from './snapshot.codec';

const ROOT = join(__dirname, '../../..');
const RECORD = join(__dirname, 'projection.shapes.txt');

/** One field a line, nested types indented, unions one member a line: a readable diff. */
function shapeOf(
  type: ts.Type,
  checker: ts.TypeChecker,
  indent: string,
  stack: ts.Type[],
  leaveOut: readonly string[] = [],
): string {
  if (type.isUnion()) {
    const members = type.types.map((member) => shapeOf(member, checker, indent, stack));
    return members.length > 1 ? [...new Set(members)].sort().join(' | ') : members[0];
  }
  if (checker.isArrayType(type)) {
    const [element] = checker.getTypeArguments(type as ts.TypeReference);
    return `Array<${shapeOf(element, checker, indent, stack)}>`;
  }
  if (checker.isTupleType(type)) {
    const elements = checker.getTypeArguments(type as ts.TypeReference);
    return `[${elements.map((element) => shapeOf(element, checker, indent, stack)).join(', ')}]`;
  }
  const ours = (type.aliasSymbol ?? type.getSymbol())?.declarations?.some(
    (declaration) => !declaration.getSourceFile().fileName.includes('node_modules'),
  );
  // Ours, or a mapped type (a Record) whose values may be ours; the library's own types
  // (Uint8Array, Date) are named, not opened.
  const mapped = ((type as ts.ObjectType).objectFlags & ts.ObjectFlags.Mapped) !== 0;
  if (
    !(type.flags & ts.TypeFlags.Object) ||
    !(ours || mapped) ||
    type.getCallSignatures().length > 0
  ) {
    return checker.typeToString(type);
  }
  if (stack.includes(type)) return `<recursive ${checker.typeToString(type)}>`;
  const inner = `${indent}  `;
  const lines: string[] = [];
  for (const info of checker.getIndexInfosOfType(type)) {
    const key = checker.typeToString(info.keyType);
    lines.push(`${inner}[key: ${key}]: ${shapeOf(info.type, checker, inner, [...stack, type])}`);
  }
  const properties = checker
    .getPropertiesOfType(type)
    .filter((property) => !leaveOut.includes(property.name))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const property of properties) {
    const optional = property.flags & ts.SymbolFlags.Optional ? '?' : '';
    const propertyType = checker.getTypeOfSymbol(property);
    lines.push(
      `${inner}${property.name}${optional}: ${shapeOf(propertyType, checker, inner, [...stack, type])}`,
    );
  }
  return lines.length === 0 ? '{}' : `{\n${lines.join('\n')}\n${indent}}`;
}

/** The shapes as the checker sees them now: the projection's, and a snapshot's layout. */
function currentShapes(): { state: string; snapshot: string } {
  const config = ts.readConfigFile(join(ROOT, 'tsconfig.json'), ts.sys.readFile);
  const { options } = ts.parseJsonConfigFileContent(config.config, ts.sys, ROOT);
  const probe = join(__dirname, 'snapshot.codec.ts');
  const program = ts.createProgram([probe], { ...options, noEmit: true, types: [] });
  const checker = program.getTypeChecker();
  const typeNamed = (file: string, name: string): ts.Type => {
    const source = program.getSourceFile(join(ROOT, file));
    const symbol = source && checker.getSymbolAtLocation(source)?.exports?.get(name as ts.__String);
    if (!symbol) throw new Error(`${file} exports no ${name}`);
    return checker.getDeclaredTypeOfSymbol(symbol);
  };
  const state = shapeOf(
    typeNamed('libs/adventure/src/adventure.state.ts', 'AdventureState'),
    checker,
    '',
    [],
  );
  // The layout a snapshot is written in; the state it carries is the projection's, above.
  const lean = typeNamed('libs/adventure-store/src/snapshot.codec.ts', 'LeanSnapshot');
  const layout = shapeOf(lean, checker, '', [], ['state']);
  const codecSource = readFileSync(probe, 'utf8');
  const columns = /const COLUMNS = \[([^\]]*)\]/
    .exec(codecSource)?.[1]
    .replace(/\s+/g, ' ')
    .replace(/,?\s*$/, '');
  return { state, snapshot: `columns, in this order:${columns}\n${layout}` };
}

interface Recorded {
  projectorVersion: number;
  codec: number;
  state: string;
  snapshot: string;
}

function render(recorded: Recorded): string {
  return [
    "# The projection's shape and a snapshot's layout, as projection.shape.spec.ts reads them.",
    '# Written by that spec (UPDATE_PROJECTION_SHAPES=1); never by hand.',
    `projectorVersion ${recorded.projectorVersion}`,
    recorded.state,
    `codec ${recorded.codec}`,
    recorded.snapshot,
    '',
  ].join('\n');
}

function parse(text: string): Recorded {
  const match = /(?:^|\n)projectorVersion (\d+)\n([\s\S]*?)\ncodec (\d+)\n([\s\S]*)$/.exec(text);
  if (!match) throw new Error(`${RECORD} is not in the form this spec writes`);
  return {
    projectorVersion: Number(match[1]),
    state: match[2],
    codec: Number(match[3]),
    snapshot: match[4].replace(/\n$/, ''),
  };
}

describe('the shapes snapshots depend on', () => {
  it('given the recorded shapes, then the projection and the snapshot layout are as recorded, or their versions were bumped', () => {
    const now = currentShapes();
    const recorded = parse(readFileSync(RECORD, 'utf8'));
    const problems: string[] = [];
    if (now.state !== recorded.state && projectorVersion === recorded.projectorVersion) {
      problems.push(
        `AdventureState's shape changed but projectorVersion is still ${projectorVersion}: ` +
          'bump it in libs/adventure/src/adventure.state.ts (say why in its comment), or stored ' +
          'snapshots of the old shape are read as the new one',
      );
    }
    if (now.snapshot !== recorded.snapshot && SNAPSHOT_CODEC === recorded.codec) {
      problems.push(
        `the snapshot layout (LeanSnapshot, COLUMNS) changed but SNAPSHOT_CODEC is still ${SNAPSHOT_CODEC}: ` +
          'bump it in libs/adventure-store/src/snapshot.codec.ts (say what changed in its comment)',
      );
    }
    const current: Recorded = { projectorVersion, codec: SNAPSHOT_CODEC, ...now };
    const stale = render(current) !== render(recorded);
    if (problems.length === 0 && stale && process.env.UPDATE_PROJECTION_SHAPES) {
      writeFileSync(RECORD, render(current));
      return;
    }
    if (problems.length === 0 && stale) {
      problems.push(
        `the versions were bumped (projectorVersion ${recorded.projectorVersion} → ${projectorVersion}, ` +
          `codec ${recorded.codec} → ${SNAPSHOT_CODEC}): record the shapes they stand for with ` +
          'UPDATE_PROJECTION_SHAPES=1 npx jest libs/adventure-store/src/projection.shape.spec.ts',
      );
    }
    if (problems.length > 0) {
      throw new Error(
        `${problems.join('\n')}\n(${RECORD} holds the recorded shapes; git diff it after recording)`,
      );
    }
  });
});
