// The messages between the pool (parent) and a sandbox child. Each crosses the IPC channel as
// one JSON string: the child never receives a host object, only text it parses itself.
import type { HookRunRequest, HookRunResponse, SourceField } from '@chronicle/scripting';

export type ParentMessage =
  /**
   * `sourcesOmitted`: the child compiled this (owner, script, version, hook) before, so the
   * Library and hook sources (up to 4 MiB) are not sent again; a child that no longer has them
   * answers `need-sources`.
   */
  | { id: number; kind: 'run'; request: HookRunRequest; sourcesOmitted?: boolean }
  | { id: number; kind: 'compile'; sources: Partial<Record<SourceField, string>> };

export interface CompileProblem {
  field: SourceField;
  error: string;
}

export type ChildMessage =
  | { kind: 'ready' }
  | { id: number; kind: 'ran'; response: HookRunResponse; retiring: boolean }
  | { id: number; kind: 'need-sources' }
  | { id: number; kind: 'compiled'; problems: CompileProblem[]; retiring: boolean };
