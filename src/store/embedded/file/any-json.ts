import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import chain from 'stream-chain';
import { parser } from 'stream-json';
import { streamObject } from 'stream-json/streamers/stream-object.js';
import { twice } from './duplicate-field.js';
import { RecordMap } from './record-map.js';
import { DataFileError, FORMATS_SINCE, type JournaledFileData, type RecordFormats } from './types.js';

/**
 * A file of schema version 4 on read by the streaming parser (one reformatted by hand,
 * say): its records in their collections' formats are read as the line reader reads them.
 */
export function inFormats(data: JournaledFileData, formats: RecordFormats): JournaledFileData {
  if (typeof data.schema_version !== 'number' || data.schema_version < FORMATS_SINCE) return data;
  for (const [name, format] of Object.entries(formats)) {
    const records = data[name];
    if (typeof records !== 'object' || records === null || records instanceof RecordMap) continue;
    const earlier = (key: string) => (Object.hasOwn(records, key) ? records[key] : undefined);
    for (const key of Object.keys(records)) records[key] = format.read(key, records[key], earlier);
  }
  return data;
}

/** Reads any JSON object with a streaming parser: each top-level value is assembled as it ends. */
export async function readAnyJson(path: string): Promise<JournaledFileData> {
  const data: Record<string, unknown> = {};
  try {
    const pipeline = chain([createReadStream(path), parser(), streamObject()]);
    for await (const { key, value } of pipeline as AsyncIterable<{ key: string; value: unknown }>) {
      if (Object.hasOwn(data, key)) throw twice(path, key);
      data[key] = value;
    }
  } catch (error) {
    if (error instanceof DataFileError) throw error;
    // Valid JSON of another kind (a list, null, a number) is told as such, not as broken JSON.
    if (!(await startsWithObject(path))) throw notAnObject(path);
    throw new DataFileError(
      `The data file ${path} is not valid JSON (${(error as Error).message}). ` +
        'It was left untouched: repair or move it, or start with --data :memory:.',
    );
  }
  if (Object.keys(data).length === 0 && !(await startsWithObject(path))) throw notAnObject(path);
  return data as JournaledFileData;
}

const notAnObject = (path: string): DataFileError =>
  new DataFileError(`The data file ${path} does not hold a JSON object (the sandbox writes one: {"schema_version": …}). It was left untouched: repair or move it, or start with --data :memory:.`);

async function startsWithObject(path: string): Promise<boolean> {
  const handle = await open(path, 'r');
  try {
    const { buffer, bytesRead } = await handle.read(Buffer.alloc(4096), 0, 4096, 0);
    return buffer.toString('utf8', 0, bytesRead).trimStart().startsWith('{');
  } finally {
    await handle.close();
  }
}
