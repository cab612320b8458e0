import type { DatabaseSync } from 'node:sqlite';

/** One table of a SQLite schema as SQLite itself reports it (PRAGMA table_info, index_list, foreign_key_list). */
export interface TableShape {
  cols: { name: string; type: string; notnull: number; dflt: string | null; pk: number }[];
  idx: { unique: number; partial: number; origin: string; cols: string; name?: string }[];
  fks: { table: string; from: string; to: string; on_delete: string }[];
  withoutRowid: boolean;
  autoincrement: boolean;
}

interface ColumnInfo {
  name: string;
  type: string;
  notnull: number;
  dflt_value: string | null;
  pk: number;
}
interface IndexInfo {
  name: string;
  unique: number;
  partial: number;
  origin: string;
}

/**
 * The schema of `db` by table, in the words SQLite reports it, independent of how the DDL was spelled: compares a
 * database made by one set of migrations with one made by another.
 */
export function sqliteSchema(db: DatabaseSync): Record<string, TableShape> {
  const tables = (
    db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
      .all() as {
      name: string;
    }[]
  ).map((row) => row.name);
  const shape: Record<string, TableShape> = {};
  for (const table of tables) {
    const cols = (db.prepare(`PRAGMA table_info("${table}")`).all() as unknown as ColumnInfo[]).map((c) => ({
      name: c.name,
      type: c.type.toLowerCase(),
      notnull: c.notnull,
      dflt: c.dflt_value,
      pk: c.pk,
    }));
    const idx = (db.prepare(`PRAGMA index_list("${table}")`).all() as unknown as IndexInfo[])
      .map((i) => ({
        unique: i.unique,
        partial: i.partial,
        origin: i.origin,
        cols: (db.prepare(`PRAGMA index_info("${i.name}")`).all() as { name: string }[]).map((c) => c.name).join(','),
        name: i.origin === 'c' ? i.name : undefined,
      }))
      .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
    const fks = (db.prepare(`PRAGMA foreign_key_list("${table}")`).all() as unknown as TableShape['fks']).map((f) => ({
      table: f.table,
      from: f.from,
      to: f.to,
      on_delete: f.on_delete,
    }));
    const { sql } = db.prepare('SELECT sql FROM sqlite_master WHERE name = ?').get(table) as { sql: string };
    shape[table] = {
      cols,
      idx,
      fks,
      withoutRowid: /without rowid/i.test(sql),
      autoincrement: /autoincrement/i.test(sql),
    };
  }
  return shape;
}

/** Each index's SQL (partial conditions included), spelled without case, quotes or spaces, by index name. */
export function sqliteIndexSql(db: DatabaseSync): Record<string, string> {
  const rows = db.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL").all() as {
    name: string;
    sql: string;
  }[];
  return Object.fromEntries(rows.map((row) => [row.name, row.sql.toLowerCase().replace(/["\s]/g, '')]));
}
