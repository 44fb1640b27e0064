import { BinaryWriter } from '@bufbuild/protobuf/wire';
import { makeGenericClientConstructor, type ServiceDefinition } from '@grpc/grpc-js';
import { answers, digest, health, knowledge, tickets } from '@support-agent/proto';

/**
 * gRPC messages encoded with one reused protobuf writer.
 *
 * ts-proto's serializers are `Buffer.from(X.encode(value).finish())`: every message gets a new
 * writer, whose buffer starts at 128 bytes and doubles as it fills, then `finish()` copies the
 * bytes out and `Buffer.from` copies them once more. A knowledge search's answer (≈ 2 KB) thus
 * allocates six or seven ArrayBuffers, each zeroed and tracked as external memory: 20 µs of CPU
 * per message, against 5 µs with one writer kept between messages and the finished bytes
 * wrapped instead of copied; a page of ten tickets 20 → 8 µs (bench/grpc-serializers.ts). The
 * bytes are the same.
 *
 * Only the public writer API is used: `encode(value, writer)` and `finish()`, which resets the
 * writer and keeps its buffer. Encoding is synchronous, so one writer per process serves every
 * message in turn.
 */

/** What ts-proto generates for each message, as far as encoding goes. */
interface MessageEncoder {
  encode(message: unknown, writer: BinaryWriter): BinaryWriter;
}

/** A writer that grew past this for a rare large message is dropped rather than kept. */
const KEEP_BYTES = 64 * 1024;

let writer = new BinaryWriter();

// Each definition and client constructor is rebuilt once, however many servers and clients use it.
const pooled = new WeakMap<object, ServiceDefinition>();
const pooledClients = new WeakMap<object, object>();

/** `encoder`'s encoding of `message`, as the generated serializer would return it. */
export function encodePooled(encoder: MessageEncoder, message: unknown): Buffer {
  let bytes: Uint8Array;
  try {
    bytes = encoder.encode(message, writer).finish();
  } catch (err) {
    // A failed encode leaves the writer mid-message (its position and open forks): the next
    // message must not start there.
    writer = new BinaryWriter();
    throw err;
  }
  if (bytes.byteLength > KEEP_BYTES) writer = new BinaryWriter();
  // finish() returned a copy of its own: wrap it, do not copy it again.
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

// The generated modules, where each definition's message types are found by name.
const MODULES: Record<string, unknown>[] = [answers, digest, health, knowledge, tickets];

// The generated serializer's body names its message type: `Buffer.from(X.encode(value).finish())`.
const ENCODE_CALL = /\b([A-Za-z_$][\w$]*)\.encode\(\s*value\s*\)\s*\.finish\(\)/;

function isEncoder(value: unknown): value is MessageEncoder {
  return typeof (value as MessageEncoder | undefined)?.encode === 'function';
}

/** The message type a generated serializer encodes, looked up in its definition's module. */
function encoderOf(
  serialize: (value: never) => Buffer,
  module: Record<string, unknown>,
): MessageEncoder | undefined {
  const name = ENCODE_CALL.exec(String(serialize))?.[1];
  const fns = name === undefined ? undefined : module[name];
  return isEncoder(fns) ? fns : undefined;
}

/**
 * The service definition with every serializer encoding through the reused writer. Methods
 * whose message type cannot be found keep the generated serializer (the test over every
 * generated service checks that none is left).
 */
export function withPooledSerializers<D extends ServiceDefinition>(definition: D): D {
  const known = pooled.get(definition);
  if (known) return known as D;
  const module = MODULES.find((m) => Object.values(m).includes(definition));
  if (!module) return definition;
  const lean: Record<string, unknown> = {};
  for (const [name, method] of Object.entries(definition)) {
    const request = encoderOf(method.requestSerialize, module);
    const response = encoderOf(method.responseSerialize, module);
    lean[name] = {
      ...method,
      ...(request ? { requestSerialize: (value: unknown) => encodePooled(request, value) } : {}),
      ...(response ? { responseSerialize: (value: unknown) => encodePooled(response, value) } : {}),
    };
  }
  pooled.set(definition, lean as ServiceDefinition);
  return lean as D;
}

/**
 * A generated client constructor (`…ServiceClient`) rebuilt over the pooled definition: the
 * generated one captured the generated serializers when it was made.
 */
export function withPooledClientSerializers<C extends { service: object }>(Ctor: C): C {
  const known = pooledClients.get(Ctor);
  if (known) return known as C;
  const { serviceName } = Ctor as C & { serviceName?: string };
  const lean = makeGenericClientConstructor(
    withPooledSerializers(Ctor.service as ServiceDefinition),
    serviceName ?? '',
  ) as unknown as C;
  pooledClients.set(Ctor, lean);
  return lean;
}
