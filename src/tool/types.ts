/**
 * The memory tool's commands as memvault handles them after validation. Field names are the
 * protocol's (memory_20250818). Paths are raw until the path guard canonicalises them.
 */
export type ViewCommand = { command: 'view'; path: string; view_range?: [number, number] };
export type CreateCommand = { command: 'create'; path: string; file_text: string };
export type StrReplaceCommand = { command: 'str_replace'; path: string; old_str: string; new_str: string };
export type InsertCommand = { command: 'insert'; path: string; insert_line: number; insert_text: string };
export type DeleteCommand = { command: 'delete'; path: string };
export type RenameCommand = { command: 'rename'; old_path: string; new_path: string };

export type MemoryCommand =
  ViewCommand | CreateCommand | StrReplaceCommand | InsertCommand | DeleteCommand | RenameCommand;

export type CommandName = MemoryCommand['command'];
export const COMMAND_NAMES: readonly CommandName[] = ['view', 'create', 'str_replace', 'insert', 'delete', 'rename'];

export type TextBlock = { type: 'text'; text: string };
export type ImageBlock = {
  type: 'image';
  source: { type: 'base64'; media_type: 'image/png' | 'image/jpeg' | 'image/gif' | 'image/webp'; data: string };
};
export type ResultContent = string | Array<TextBlock | ImageBlock>;
