import { isUtf8 } from 'node:buffer';
import express, { type RequestHandler } from 'express';
import { noteJsonNumberSource } from '@ledgerkey/money';
import type { ProblemCode } from './problem-details';

/** A body the JSON parser refused: malformed, too large, or in an unsupported encoding. */
export class RequestBodyError extends Error {
  constructor(
    readonly code: ProblemCode,
    detail: string,
    options: { cause: unknown },
  ) {
    super(detail, options);
  }
}

/** The parser's error type for a body that is not UTF-8 (thrown by our `verify`). */
const INVALID_UTF8 = 'encoding.invalid_utf8';
/** The parser's error type for a body nested deeper than `MAX_NESTING` (thrown by our `verify`). */
const TOO_DEEP = 'entity.too_deep';

/**
 * Objects and arrays inside one another, at most: every request schema is a few levels deep.
 * Deeper bodies are refused before parsing: the validation pipe walks a body recursively, and a
 * couple of thousand levels overflowed its stack (a 500).
 */
export const MAX_NESTING = 32;

/** Whether the JSON text nests objects and arrays deeper than `max`: one pass, strings skipped. */
function nestsDeeperThan(bytes: Buffer, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let index = 0; index < bytes.length; index += 1) {
    const byte = bytes[index];
    if (inString) {
      if (byte === 0x5c)
        index += 1; // a backslash escapes the next byte
      else if (byte === 0x22) inString = false;
    } else if (byte === 0x22) {
      inString = true;
    } else if (byte === 0x7b || byte === 0x5b) {
      depth += 1;
      if (depth > max) return true;
    } else if (byte === 0x7d || byte === 0x5d) {
      depth -= 1;
    }
  }
  return false;
}

function bodyError(error: unknown): RequestBodyError {
  switch ((error as { type?: unknown }).type) {
    case 'entity.too.large':
      return new RequestBodyError('payload_too_large', 'The request body is larger than this API accepts.', {
        cause: error,
      });
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new RequestBodyError(
        'unsupported_media_type',
        'Send the body as UTF-8 encoded application/json.',
        {
          cause: error,
        },
      );
    case TOO_DEEP:
      return new RequestBodyError(
        'malformed_json',
        `The request body nests objects and arrays deeper than ${MAX_NESTING} levels.`,
        { cause: error },
      );
    case INVALID_UTF8:
      return new RequestBodyError(
        'malformed_json',
        'The request body is not valid UTF-8 (JSON text is UTF-8): it holds a byte sequence that encodes no character.',
        { cause: error },
      );
    default:
      return new RequestBodyError('malformed_json', 'The request body is not valid JSON.', { cause: error });
  }
}

/**
 * PostgreSQL text cannot hold NUL, and a lone UTF-16 surrogate would be silently replaced on
 * the way in: both are refused as malformed JSON rather than failing (or mutating) at write.
 */
function rejectUnstorableText(key: string, value: unknown): unknown {
  if ((typeof value === 'string' && !isStorable(value)) || !isStorable(key)) {
    throw new SyntaxError('strings must not contain NUL characters or unpaired surrogates');
  }
  return value;
}

/**
 * The reviver of every body: refuses unstorable text, and notes numbers written as decimals
 * (`50.00`, which JSON.parse reads as 50) so `@MinorUnits()` refuses them as amounts.
 */
function reviver(this: unknown, key: string, value: unknown, context?: { source?: string }): unknown {
  noteJsonNumberSource(this, key, value, context?.source);
  return rejectUnstorableText(key, value);
}

function isStorable(text: string): boolean {
  return !text.includes('\u0000') && text.isWellFormed();
}

/**
 * express.json(), with its failures turned into our coded errors before Nest sees them (Nest
 * would flatten them all into a generic 400).
 */
export function jsonBody(limitBytes: number): RequestHandler {
  const parse = express.json({
    limit: limitBytes,
    reviver,
    // The exact bytes stay on the request (`rawBody`, Nest's name for it): the idempotency layer
    // answers a byte-identical retry from its digest without validating the body again.
    verify: (request, _response, bytes) => {
      // Decoding would turn each invalid sequence into U+FFFD: other bytes, the same stored text
      // under another fingerprint. Refused instead, so what is stored is what was sent.
      if (!isUtf8(bytes)) throw Object.assign(new Error('invalid UTF-8'), { type: INVALID_UTF8 });
      if (nestsDeeperThan(bytes, MAX_NESTING)) {
        throw Object.assign(new Error('nested too deep'), { type: TOO_DEEP });
      }
      (request as { rawBody?: Buffer }).rawBody = bytes;
    },
  });
  return (request, response, next) => {
    const hasBody =
      request.headers['transfer-encoding'] !== undefined || Number(request.headers['content-length']) > 0;
    if (hasBody && !request.is('application/json')) {
      next(
        new RequestBodyError('unsupported_media_type', 'Send the body as UTF-8 encoded application/json.', {
          cause: null,
        }),
      );
      return;
    }
    parse(request, response, (error?: unknown) => next(error === undefined ? undefined : bodyError(error)));
  };
}
