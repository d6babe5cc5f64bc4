// The messages between the pool (parent) and a sandbox child. Each crosses the IPC channel as
// one JSON string: the child never receives a host object, only text it parses itself.
import type { HookRunRequest, HookRunResponse, SourceField } from '@chronicle/scripting';

export type ParentMessage =
  | { id: number; kind: 'run'; request: HookRunRequest }
  | { id: number; kind: 'compile'; sources: Partial<Record<SourceField, string>> };

export interface CompileProblem {
  field: SourceField;
  error: string;
}

export type ChildMessage =
  | { kind: 'ready' }
  | { id: number; kind: 'ran'; response: HookRunResponse; retiring: boolean }
  | { id: number; kind: 'compiled'; problems: CompileProblem[]; retiring: boolean };
